/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system bus's address and the socket path in it (bus-address.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-address.h"

const char *bus_system_address(void) {
        return secure_getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: BUS_SYSTEM_ADDRESS_DEFAULT;
}

static int hex_value(char c) {
        return isdigit((unsigned char) c) ? c - '0' : tolower((unsigned char) c) - 'a' + 10;
}

/* The value at p, up to the end of its key (',') or address (';'), %XX-unescaped as sd-bus
 * does: a '%' not followed by two hex digits makes the address invalid. */
static char *unescape_value(const char *p) {
        char *out = malloc(strcspn(p, ",;") + 1), *o = out;

        if (!out)
                return NULL;
        for (; *p && *p != ',' && *p != ';'; p++)
                if (*p != '%')
                        *o++ = *p;
                else if (isxdigit((unsigned char) p[1]) && isxdigit((unsigned char) p[2])) {
                        *o++ = (char) (hex_value(p[1]) * 16 + hex_value(p[2]));
                        p += 2;
                } else {
                        free(out);
                        errno = EINVAL;
                        return NULL;
                }
        *o = '\0';
        return out;
}

char *bus_address_socket_path(const char *address) {
        static const char transport[] = "unix:";
        const char *p;

        /* The first address of the list: "unix:" and its keys, in any order. */
        if (!address || strncmp(address, transport, strlen(transport)) != 0) {
                errno = EINVAL;
                return NULL;
        }
        for (p = address + strlen(transport); *p && *p != ';'; p += strcspn(p, ",;"), p += *p == ',')
                if (strncmp(p, "path=", 5) == 0) {
                        char *path = unescape_value(p + 5);
                        if (path && !*path) {
                                free(path);
                                errno = EINVAL;
                                return NULL;
                        }
                        return path;
                }
        errno = EINVAL;
        return NULL;
}
