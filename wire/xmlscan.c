#include "xmlscan.h"

#include <string.h>

const char *
xmlscan_skip_misc(const char *p)
{
    for (;;) {
        while (xmlscan_is_space(*p)) {
            p++;
        }
        if (!strncmp(p, "<!--", 4)) {
            const char *end = strstr(p + 4, "-->");
            if (!end) {
                return NULL;
            }
            p = end + 3;
        } else if (!strncmp(p, "<?", 2)) {
            const char *end = strstr(p + 2, "?>");
            if (!end) {
                return NULL;
            }
            p = end + 2;
        } else {
            return p;
        }
    }
}
