/*
 * SHA-256 in hex; see digest.h. OpenSSL's EVP interface, which the
 * project links already (libssh and the SSH host keys use it).
 */
#include "digest.h"

#include <stdio.h>

#include <openssl/evp.h>

void
digest_sha256_hex(const void *data, size_t len, char out[DIGEST_SHA256_HEX_BYTES])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;

    out[0] = '\0';
    if (EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) && md_len == 32) {
        for (unsigned i = 0; i < 32; i++) {
            snprintf(out + 2 * i, 3, "%02x", md[i]);
        }
    }
}
