/*
 * Reading Chart.js; see chartjs.h.
 */
#include "chartjs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
chartjs_load(size_t *len, char *err, size_t err_len)
{
    const char *path = getenv("FLEETSIM_CHARTJS");
    FILE *f;
    char *text;
    size_t n;

    if (!path || !*path) {
        path = CHARTJS_DEFAULT_PATH;
    }
    if (!(f = fopen(path, "rb"))) {
        snprintf(err, err_len,
                 "cannot read Chart.js at %s: %s (install Debian's libjs-chart.js, or set "
                 "FLEETSIM_CHARTJS to its chart.min.js)",
                 path, strerror(errno));
        return NULL;
    }
    if (!(text = malloc(CHARTJS_MAX_BYTES + 1))) {
        fclose(f);
        snprintf(err, err_len, "out of memory reading %s", path);
        return NULL;
    }
    n = fread(text, 1, CHARTJS_MAX_BYTES + 1, f);
    fclose(f);
    text[n <= CHARTJS_MAX_BYTES ? n : CHARTJS_MAX_BYTES] = '\0';
    if (n == 0 || n > CHARTJS_MAX_BYTES || !strstr(text, "Chart")) {
        snprintf(err, err_len, "%s is not Chart.js (empty, over 4 MiB, or without \"Chart\")", path);
        free(text);
        return NULL;
    }
    /* A page inlines it inside <script>: a "</script" in it would end the element early. */
    if (strstr(text, "</script")) {
        snprintf(err, err_len, "%s holds \"</script\": it cannot be inlined", path);
        free(text);
        return NULL;
    }
    *len = n;
    return text;
}
