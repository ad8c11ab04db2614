/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where the system bus is, as sd-bus finds it: lowlatd watches its socket while the bus is
 * away, lowlatctl names it when it cannot connect. */
#pragma once

/* $DBUS_SYSTEM_BUS_ADDRESS (honoured as sd-bus does, not under setuid), else the default. */
#define BUS_SYSTEM_ADDRESS_DEFAULT "unix:path=/run/dbus/system_bus_socket"
const char *bus_system_address(void);
/* The socket path of the first address of the list when it is "unix:" with a path= key
 * (among its keys, in any order), %XX-unescaped; NULL (errno EINVAL) for any other
 * transport, no or an empty path, or an escape that is not '%' and two hex digits (sd-bus
 * refuses such an address), and NULL (errno ENOMEM) out of memory. */
char *bus_address_socket_path(const char *address);
