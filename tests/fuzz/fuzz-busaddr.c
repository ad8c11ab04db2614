/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the reading of the system bus's address (common/bus-address.c): the socket that
 * lowlatd watches while the bus is away and that lowlatctl names when it cannot connect,
 * taken from $DBUS_SYSTEM_BUS_ADDRESS. Promises checked against a reference reader written
 * from the D-Bus specification ("Server Addresses": addresses separated by ';', each
 * "transport:key=value,...", values %XX-escaped) and sd-bus's rule that a '%' must be
 * followed by two hex digits: the path is the first address's unix path= value, unescaped,
 * or nothing; and every path comes back from the address that escapes all of its bytes. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>

#include "bus-address.h"
#include "fuzz.h"

static int hex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* The first address's path; NULL when it has none, or a malformed or empty one. */
static char *reference(const char *address) {
        size_t end = strcspn(address, ";"); /* the first address */
        size_t i;

        if (end < 5 || memcmp(address, "unix:", 5) != 0)
                return NULL;
        i = 5;
        while (i < end) {
                size_t key_end = i;
                while (key_end < end && address[key_end] != ',')
                        key_end++;
                if (key_end - i >= 5 && memcmp(address + i, "path=", 5) == 0) {
                        char *out = malloc(key_end - i), *o = out;
                        FUZZ_CHECK(out, "out of memory");
                        for (size_t k = i + 5; k < key_end; k++) {
                                if (address[k] != '%') {
                                        *o++ = address[k];
                                        continue;
                                }
                                if (k + 2 >= key_end || hex(address[k + 1]) < 0 || hex(address[k + 2]) < 0) {
                                        free(out);
                                        return NULL;
                                }
                                *o++ = (char) (hex(address[k + 1]) * 16 + hex(address[k + 2]));
                                k += 2;
                        }
                        *o = '\0';
                        if (!*out) {
                                free(out);
                                return NULL;
                        }
                        return out;
                }
                i = key_end + 1;
        }
        return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *address = fuzz_strndup(data, size), *path, *ref;

        errno = 0;
        path = bus_address_socket_path(address);
        FUZZ_CHECK(path || errno == EINVAL, "no path and errno %d", errno);
        ref = reference(address);
        FUZZ_CHECK((!path && !ref) || (path && ref && strcmp(path, ref) == 0), "'%s': the path is '%s', the reference says '%s'",
                   address, path ?: "(none)", ref ?: "(none)");
        if (path) {
                size_t n = strlen(path);
                char *escaped = malloc(strlen("unix:path=") + 3 * n + strlen(",guid=0;tcp:host=x") + 1), *again;

                FUZZ_CHECK(escaped, "out of memory");
                strcpy(escaped, "unix:path=");
                for (size_t i = 0; i < n; i++)
                        sprintf(escaped + strlen(escaped), "%%%02X", (unsigned char) path[i]);
                strcat(escaped, ",guid=0;tcp:host=x");
                again = bus_address_socket_path(escaped);
                FUZZ_CHECK(again && strcmp(again, path) == 0, "'%s' does not read back as '%s'", escaped, path);
                free(again);
                free(escaped);
        }
        free(ref);
        free(path);
        free(address);
        return 0;
}
