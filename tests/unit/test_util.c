/*
 * Shared unit-test helpers; see test_util.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "test_util.h"

struct ly_ctx *
tu_ctx_new(const char *extra_yang)
{
    struct ly_ctx *ctx = NULL;
    const char *nc_features[] = {"writable-running", "candidate", "rollback-on-error",
                                 "validate",         "xpath",     NULL};

    assert_int_equal(ly_ctx_new(NULL, 0, &ctx), LY_SUCCESS);
    assert_int_equal(ly_ctx_set_searchdir(ctx, TU_YUMA_NMDA_DIR), LY_SUCCESS);
    assert_int_equal(ly_ctx_set_searchdir(ctx, TU_YUMA_IETF_DIR), LY_SUCCESS);
    assert_non_null(ly_ctx_load_module(ctx, "ietf-netconf", "2011-06-01", nc_features));
    assert_non_null(ly_ctx_load_module(ctx, "ietf-interfaces", "2018-02-20", NULL));
    assert_non_null(ly_ctx_load_module(ctx, "iana-if-type", NULL, NULL));
    if (extra_yang) {
        assert_int_equal(lys_parse_mem(ctx, extra_yang, LYS_IN_YANG, NULL), LY_SUCCESS);
    }
    return ctx;
}

struct lyd_node *
tu_parse_data(struct ly_ctx *ctx, const char *xml)
{
    struct lyd_node *tree = NULL;

    if (lyd_parse_data_mem(ctx, xml, LYD_XML, LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
                           LYD_VALIDATE_NO_STATE | LYD_VALIDATE_PRESENT, &tree)) {
        fail_msg("cannot parse test data: %s", ly_errmsg(ctx));
    }
    return tree;
}

char *
tu_print(const struct lyd_node *tree)
{
    char *out = NULL;

    if (!tree) {
        out = calloc(1, 1);
        return out;
    }
    assert_int_equal(lyd_print_mem(&out, tree, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK),
                     LY_SUCCESS);
    return out;
}
