/*
 * Runs a fuzz harness's LLVMFuzzerTestOneInput over every file of the
 * corpus folders (or files) given on the command line, once each: how ctest
 * replays the corpora and every crash input ever found, in any build, with
 * or without libFuzzer. A harness that crashes or trips a sanitizer fails
 * the test; an empty or missing corpus folder fails it too, so a corpus
 * cannot silently vanish.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Feeds one file to the harness. @return 0, or -1 when it cannot be read. */
static int
replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    long size;

    if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
        !(data = malloc((size_t)size + 1)) || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(data);
        if (f) {
            fclose(f);
        }
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, (size_t)size);
    free(data);
    return 0;
}

int
main(int argc, char **argv)
{
    unsigned replayed = 0;

    if (LLVMFuzzerInitialize) {
        LLVMFuzzerInitialize(&argc, &argv);
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        DIR *dir;
        struct dirent *e;

        if (stat(argv[i], &st)) {
            fprintf(stderr, "replay: %s: no such corpus\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i])) {
                return 1;
            }
            replayed++;
            continue;
        }
        if (!(dir = opendir(argv[i]))) {
            fprintf(stderr, "replay: cannot open %s\n", argv[i]);
            return 1;
        }
        while ((e = readdir(dir))) {
            char path[4096];
            if (e->d_name[0] == '.') {
                continue;
            }
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (replay_file(path)) {
                closedir(dir);
                return 1;
            }
            replayed++;
        }
        closedir(dir);
    }
    if (!replayed) {
        fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    printf("replay: %u inputs, no crash\n", replayed);
    return 0;
}
