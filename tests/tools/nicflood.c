/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Flips one feature of one interface many times as fast as ethtool netlink allows, ending
 * on a given value: enough notifications to overrun a monitor socket that is not being
 * read (a stopped lowlatd), so tests can drive the ENOBUFS resync path.
 *   nicflood IFNAME FEATURE COUNT on|off */
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "host/ethtool.h"
#include "basic/util.h"

int main(int argc, char *argv[]) {
        EthtoolClient *c = NULL;
        unsigned count, ifindex;
        bool last;
        int r;

        if (argc != 5 || parse_unsigned(argv[3], &count) < 0 || parse_boolean(argv[4], &last) < 0) {
                fprintf(stderr, "usage: nicflood IFNAME FEATURE COUNT on|off\n");
                return 2;
        }
        ifindex = if_nametoindex(argv[1]);
        if (ifindex == 0) {
                fprintf(stderr, "nicflood: no interface %s\n", argv[1]);
                return 1;
        }
        r = ethtool_client_new(&c);
        if (r < 0) {
                fprintf(stderr, "nicflood: ethtool netlink: %s\n", strerror(-r));
                return 1;
        }
        for (unsigned i = 0; i < count; i++) {
                /* Alternate so that every SET changes something and notifies; end on last. */
                bool on = ((count - i) % 2 == 1) ? last : !last;
                r = ethtool_set_feature(c, (int) ifindex, argv[2], on, NULL);
                if (r < 0) {
                        fprintf(stderr, "nicflood: flip %u: %s\n", i, strerror(-r));
                        ethtool_client_free(c);
                        return 1;
                }
        }
        ethtool_client_free(c);
        return 0;
}
