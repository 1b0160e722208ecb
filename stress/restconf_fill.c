/*
 * Filling restconf's requests; see restconf_fill.h. The content is split
 * once, so filling a body is a few copies and number prints.
 */
#include "restconf_fill.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char key_peerid[] = "{PEERID}";
static const char key_intleaf[] = "{INTLEAF}";
static const char key_device_port[] = "{DEVICE_PORT}";
static const char key_phys_addr[] = "{PHYS_ADDR}";

/* Offset of the first @p key in @p text, or SIZE_MAX. */
static size_t
first_of(const char *text, const char *key)
{
    const char *p = strstr(text, key);

    return p ? (size_t)(p - text) : SIZE_MAX;
}

int
rfill_init(struct rfill *f, char *text)
{
    size_t len = strlen(text);
    size_t at_peerid = first_of(text, key_peerid);
    /* OpenDaylight fills {INTLEAF} only inside its {PEERID} branch. */
    size_t at_intleaf = at_peerid != SIZE_MAX ? first_of(text, key_intleaf) : SIZE_MAX;
    size_t at_port = first_of(text, key_device_port);
    size_t cap = 8;
    size_t i = 0;
    size_t lit = 0;

    memset(f, 0, sizeof *f);
    f->text = text;
    for (const char *p = text; (p = strstr(p, key_phys_addr)); p += sizeof key_phys_addr - 1) {
        cap += 2;
    }
    f->parts = calloc(cap, sizeof *f->parts);
    if (!f->parts) {
        free(text);
        f->text = NULL;
        return -1;
    }
    while (i < len) {
        enum rfill_kind kind = RFILL_TEXT;
        size_t klen = 0;
        if (i == at_peerid) {
            kind = RFILL_PEERID, klen = sizeof key_peerid - 1;
        } else if (i == at_intleaf) {
            kind = RFILL_INTLEAF, klen = sizeof key_intleaf - 1;
        } else if (i == at_port) {
            kind = RFILL_DEVICE_PORT, klen = sizeof key_device_port - 1;
        } else if (!strncmp(text + i, key_phys_addr, sizeof key_phys_addr - 1)) {
            kind = RFILL_PHYS_ADDR, klen = sizeof key_phys_addr - 1;
            f->phys_addr_count++;
        }
        if (kind == RFILL_TEXT) {
            i++;
            continue;
        }
        if (i > lit) {
            f->parts[f->part_count++] = (struct rfill_part){RFILL_TEXT, text + lit, i - lit};
        }
        f->parts[f->part_count++] = (struct rfill_part){kind, NULL, 0};
        i += klen;
        lit = i;
    }
    if (len > lit) {
        f->parts[f->part_count++] = (struct rfill_part){RFILL_TEXT, text + lit, len - lit};
    }
    return 0;
}

void
rfill_free(struct rfill *f)
{
    free(f->parts);
    free(f->text);
    memset(f, 0, sizeof *f);
}

void
rfill_mac(uint64_t mac, char out[18])
{
    snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", (unsigned)(mac >> 40) & 255u,
             (unsigned)(mac >> 32) & 255u, (unsigned)(mac >> 24) & 255u, (unsigned)(mac >> 16) & 255u,
             (unsigned)(mac >> 8) & 255u, (unsigned)mac & 255u);
}

void
rfill_expand(const struct rfill *f, const struct rfill_vars *v, struct sbuf *b)
{
    uint64_t mac = v->mac_first;
    char buf[24];

    for (size_t i = 0; i < f->part_count; i++) {
        const struct rfill_part *p = &f->parts[i];
        switch (p->kind) {
        case RFILL_TEXT:
            sbuf_add(b, p->text, p->len);
            break;
        case RFILL_PEERID:
            sbuf_printf(b, "%" PRIu32, v->stream);
            break;
        case RFILL_INTLEAF:
            sbuf_printf(b, "%" PRIu64, v->request);
            break;
        case RFILL_DEVICE_PORT:
            sbuf_printf(b, "%" PRIu32, v->device_port);
            break;
        case RFILL_PHYS_ADDR:
            rfill_mac(mac++, buf);
            sbuf_add(b, buf, 17);
            break;
        }
    }
}

char *
rfill_url(const struct net_family *fam, uint32_t ip, uint32_t port, const char *destination,
          uint32_t device_port)
{
    char host[NETADDR_TEXT_BYTES];
    struct sbuf b = {0};
    size_t at = first_of(destination, key_device_port);

    sbuf_printf(&b, "http://%s:%u", netaddr_host(fam, ip, host, sizeof host), (unsigned)port);
    if (at == SIZE_MAX) {
        sbuf_adds(&b, destination);
    } else {
        sbuf_add(&b, destination, at);
        sbuf_printf(&b, "%" PRIu32, device_port);
        sbuf_adds(&b, destination + at + sizeof key_device_port - 1);
    }
    if (b.failed) {
        sbuf_free(&b);
        return NULL;
    }
    return sbuf_take(&b, NULL);
}

void
rfill_node(const char *url, char *out, size_t len)
{
    const char *p = strstr(url, "node=");
    size_t n = 0;

    if (p) {
        p += 5;
        n = strcspn(p, "/?");
        n = n < len - 1 ? n : len - 1;
        memcpy(out, p, n);
    }
    out[n] = '\0';
}
