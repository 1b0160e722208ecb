/*
 * The standard modules fleetsim writes data for, and where that data lands
 * in each revision a device may implement (docs/ARCHITECTURE.md "Standard
 * modules and their revisions"). A vendor's folder decides the revision; code
 * that generates data asks here where it goes instead of testing revisions.
 */
#ifndef FLEET_STD_REVISIONS_H
#define FLEET_STD_REVISIONS_H

#include <stdint.h>

#include <libyang/libyang.h>

/* Where the generated interface data (profile interfaces, their state and counters) lands in one revision
 * of ietf-interfaces. The configuration is /interfaces/interface in every revision. */
struct stdrev_interfaces {
    const char *revision; /* the ietf-interfaces revision this layout is written for */
    const char *rfc;      /* the RFC that published it, for messages */
    uint8_t config_state; /* 1: configured entries of /interfaces carry their state leaves (NMDA) */
    uint8_t state_list;   /* 1: /interfaces-state lists every interface with its state and statistics */
};

/**
 * @brief The layout for revision @p revision of ietf-interfaces: the one of that revision, else of the
 * newest handled revision older than it (a later revision keeps the nodes of the one before), else of the
 * oldest handled one.
 * @param[in] revision A revision date (YYYY-MM-DD), or NULL for a module without revision.
 * @return A static layout, never NULL.
 */
const struct stdrev_interfaces *stdrev_interfaces_layout(const char *revision);

/**
 * @brief The layout for the ietf-interfaces @p ctx implements, checked against its compiled schema.
 * @param[in] ctx A compiled context.
 * @return A static layout, or NULL when @p ctx implements no ietf-interfaces or its schema lacks a node the
 *         layout writes (then get generates no interface state; a recorded type serves its recorded one).
 */
const struct stdrev_interfaces *stdrev_interfaces_of(const struct ly_ctx *ctx);

/**
 * @brief Log, once per module, each standard module fleetsim writes data for whose implemented revision in
 * @p ctx is not one it handles by name, with the revision whose layout its data follows. May be called at
 * load only (it writes to the log).
 * @param[in] ctx A compiled context.
 * @param[in] label What the context belongs to (a type's name), for the message.
 */
void stdrev_note_revisions(const struct ly_ctx *ctx, const char *label);

#endif
