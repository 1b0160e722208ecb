/*
 * Fuzz harness of the get/get-config filters (testtool/model/filter.h) over
 * a device's data: the profile's configuration and the yang-library data,
 * which has nested lists, keys, leaf-lists and several namespaces.
 * An input that starts with '/' is an XPath filter expression; any other is
 * the content of <filter type="subtree">, parsed inside a <get-config> as the
 * server parses it and applied with filter_subtree(). Every result is printed,
 * as the reply would print it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "fuzz_fleet.h"
#include "xmlguard.h"

static struct lyd_node *fz_data; /* what filters select from; made once */

static void
fz_data_free(void)
{
    lyd_free_all(fz_data);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct lyd_node *copy = NULL;

    (void)argc;
    (void)argv;
    fz_fleet_open(NULL);
    if ((fz_fleet.types[0]->template_tree &&
         lyd_dup_siblings(fz_fleet.types[0]->template_tree, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS,
                          &fz_data)) ||
        lyd_dup_siblings(fz_fleet.types[0]->yanglib_tree, NULL, LYD_DUP_RECURSIVE | LYD_DUP_WITH_FLAGS,
                         &copy) ||
        lyd_merge_siblings(&fz_data, copy, LYD_MERGE_DESTRUCT)) {
        fprintf(stderr, "fuzz: cannot build the data tree\n");
        exit(1);
    }
    atexit(fz_data_free); /* runs before the fleet's context goes */
    return 0;
}

/* Print the result as a reply would, then free it. */
static void
fz_print_free(struct lyd_node *result)
{
    char *text = NULL;

    if (result && !lyd_print_mem(&text, result, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK)) {
        free(text);
    }
    lyd_free_all(result);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char head[] = "<rpc xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"1\">"
                               "<get-config><source><running/></source><filter type=\"subtree\">";
    static const char tail[] = "</filter></get-config></rpc>";
    struct ly_ctx *ctx = fz_fleet.types[0]->schemas.ctx;
    struct lyd_node *result = NULL;
    struct lyd_node *env = NULL;
    struct lyd_node *op = NULL;
    struct lyd_node *filter = NULL;
    struct ly_in *in = NULL;
    char *text;

    if (size > FZ_MAX_INPUT_BYTES || !(text = malloc(sizeof head + size + sizeof tail))) {
        return -1;
    }
    if (size && data[0] == '/') {
        memcpy(text, data, size);
        text[size] = '\0';
        filter_xpath(fz_data, text, &result);
        fz_print_free(result);
        goto cleanup;
    }
    memcpy(text, head, sizeof head - 1);
    memcpy(text + sizeof head - 1, data, size);
    memcpy(text + sizeof head - 1 + size, tail, sizeof tail);
    /* As the server does (rpc.c): libyang 2.1.30 crashes on xmlns="" before a same-named sibling. */
    if (xmlguard_empty_namespace(text)) {
        goto cleanup;
    }
    if (ly_in_new_memory(text, &in) ||
        lyd_parse_op(ctx, NULL, in, LYD_XML, LYD_TYPE_RPC_NETCONF, &env, &op)) {
        goto cleanup;
    }
    if (!lyd_find_path(op, "filter", 0, &filter)) {
        const struct lyd_node_any *any = (const struct lyd_node_any *)filter;
        if (filter_subtree(fz_data, any->value_type == LYD_ANYDATA_DATATREE ? any->value.tree : NULL,
                           &result) == FLEET_OK) {
            fz_print_free(result);
        }
    }

cleanup:
    ly_in_free(in, 0);
    lyd_free_all(op);
    lyd_free_all(env);
    free(text);
    return 0;
}
