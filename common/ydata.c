/*
 * YANG data accessors by name (see ydata.h).
 */
#include "ydata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const struct lyd_node *
ydata_child(const struct lyd_node *parent, const char *name)
{
    const struct lyd_node *c;

    LY_LIST_FOR(lyd_child(parent), c)
    {
        if (c->schema && !strcmp(c->schema->name, name)) {
            return c;
        }
    }
    return NULL;
}

const char *
ydata_str(const struct lyd_node *parent, const char *name)
{
    const struct lyd_node *c = ydata_child(parent, name);

    return c ? lyd_get_value(c) : NULL;
}

uint64_t
ydata_u64(const struct lyd_node *parent, const char *name)
{
    const char *v = ydata_str(parent, name);

    return v ? strtoull(v, NULL, 10) : 0;
}

int
ydata_user_ordered(const struct lyd_node *node)
{
    return node->schema && (node->schema->flags & LYS_ORDBY_USER);
}

/* First and last instance of @p schema among the siblings of @p node. */
void
ydata_instance_range(const struct lyd_node *node, struct lyd_node **first, struct lyd_node **last)
{
    struct lyd_node *it = NULL;

    lyd_find_sibling_val(lyd_first_sibling(node), node->schema, NULL, 0, &it);
    *first = it;
    while (it && it->next && it->next->schema == node->schema) {
        it = it->next;
    }
    *last = it;
}

void
ydata_datetime(uint64_t ms, char *buf, size_t len)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)(ms % 1000));
}
