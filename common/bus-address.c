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

char *bus_address_socket_path(const char *address) {
        static const char prefix[] = "unix:path=";
        const char *p;
        char *path, *o;

        if (!address || strncmp(address, prefix, strlen(prefix)) != 0) {
                errno = EINVAL;
                return NULL;
        }
        p = address + strlen(prefix);
        path = o = malloc(strlen(p) + 1);
        if (!path)
                return NULL;
        /* The value ends at the next key (",") or the next address (";"). */
        for (; *p && *p != ',' && *p != ';'; p++)
                if (*p == '%' && isxdigit((unsigned char) p[1]) && isxdigit((unsigned char) p[2])) {
                        *o++ = (char) (hex_value(p[1]) * 16 + hex_value(p[2]));
                        p += 2;
                } else
                        *o++ = *p;
        *o = '\0';
        return path;
}
