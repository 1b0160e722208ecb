/*
 * Standard modules fleetsim writes data for, one mapping per module and
 * revision (DESIGN.md decision 16). Only ietf-interfaces moves its data
 * between revisions (RFC 7223 keeps state apart under /interfaces-state, RFC
 * 8343 puts it beside the configuration); the others write the same nodes
 * in every revision that exists, and are listed so that a revision nobody
 * handled is said at start-up instead of being found in a reply.
 */
#include "std_revisions.h"

#include <string.h>

#include "log.h"

/* Newest first: a revision not listed takes the layout of the newest one older than it. */
static const struct stdrev_interfaces if_layouts[] = {
    /* NMDA: state beside the configuration of configured interfaces; interfaces-state, deprecated but still
     * in the module, lists every interface for pre-NMDA clients. */
    {"2018-02-20", "RFC 8343", 1, 1},
    /* Pre-NMDA: configuration only under /interfaces, every state leaf and counter under /interfaces-state.
     */
    {"2014-05-08", "RFC 7223", 0, 1},
};

#define IF_LAYOUT_COUNT (sizeof if_layouts / sizeof if_layouts[0])

/* What fleetsim writes for one standard module and the revisions it writes it for by name. */
struct std_module {
    const char *name;           /* the module */
    const char *const *handled; /* revisions written for by name, newest first, NULL-terminated; NULL: any */
};

static const char *const if_revisions[] = {"2018-02-20", "2014-05-08", NULL};
/* libyang implements its own 2019-01-04 whatever a folder holds, and writes /yang-library and
 * /modules-state (the 2016-06-21 shape) itself. */
static const char *const yanglib_revisions[] = {"2019-01-04", NULL};
static const char *const monitoring_revisions[] = {"2010-10-04", NULL};
static const char *const system_revisions[] = {"2014-08-06", NULL};

static const struct std_module std_modules[] = {
    {"ietf-interfaces", if_revisions},
    /* Identities are only ever added, so the profile's "iana-if-type:NAME" means the same in each revision
     * (one the revision lacks fails at load, naming the profile). */
    {"iana-if-type", NULL},
    {"ietf-yang-library", yanglib_revisions},
    {"ietf-netconf-monitoring", monitoring_revisions},
    {"ietf-system", system_revisions},
};

const struct stdrev_interfaces *
stdrev_interfaces_layout(const char *revision)
{
    if (!revision) {
        return &if_layouts[IF_LAYOUT_COUNT - 1];
    }
    for (size_t i = 0; i < IF_LAYOUT_COUNT; i++) {
        /* YYYY-MM-DD compares as text */
        if (strcmp(revision, if_layouts[i].revision) >= 0) {
            return &if_layouts[i];
        }
    }
    return &if_layouts[IF_LAYOUT_COUNT - 1];
}

const struct stdrev_interfaces *
stdrev_interfaces_of(const struct ly_ctx *ctx)
{
    const struct lys_module *mod = ly_ctx_get_module_implemented(ctx, "ietf-interfaces");
    const struct stdrev_interfaces *layout;

    if (!mod) {
        return NULL;
    }
    layout = stdrev_interfaces_layout(mod->revision);
    /* A revision of another shape (or features pinned off) gets no generated state rather than a get that
     * fails on every request. */
    if (layout->config_state &&
        !lys_find_path(ctx, NULL, "/ietf-interfaces:interfaces/interface/statistics/in-octets", 0)) {
        return NULL;
    }
    if (layout->state_list &&
        !lys_find_path(ctx, NULL, "/ietf-interfaces:interfaces-state/interface/statistics/in-octets", 0)) {
        return NULL;
    }
    return layout;
}

void
stdrev_note_revisions(const struct ly_ctx *ctx, const char *label)
{
    for (size_t i = 0; i < sizeof std_modules / sizeof std_modules[0]; i++) {
        const struct std_module *m = &std_modules[i];
        const struct lys_module *mod = ly_ctx_get_module_implemented(ctx, m->name);
        const char *rev = mod ? mod->revision : NULL;
        size_t k = 0;
        if (!mod || !m->handled) {
            continue;
        }
        while (m->handled[k] && (!rev || strcmp(rev, m->handled[k]))) {
            k++;
        }
        if (m->handled[k]) {
            continue;
        }
        if (m == &std_modules[0]) {
            const struct stdrev_interfaces *layout = stdrev_interfaces_layout(rev);
            log_warn("type %s: %s revision %s is not one fleetsim knows; its interface data is written as "
                     "revision %s (%s) lays it out",
                     label, m->name, rev ? rev : "(none)", layout->revision, layout->rfc);
        } else {
            log_warn("type %s: %s revision %s is not one fleetsim knows (it writes data for revision %s); "
                     "its data is written as there",
                     label, m->name, rev ? rev : "(none)", m->handled[0]);
        }
    }
}
