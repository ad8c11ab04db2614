/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* common/'s bus pieces: the Features table (every feature named once, with the member that
 * shows it and the words for its absence) and the system bus's socket path. */
#include <stdlib.h>

#include "bus-address.h"
#include "bus-features.h"
#include "tap.h"
#include "basic/util.h"

static void test_features(void) {
        bool complete = true, unique = true, round_trip = true;

        for (BusFeature f = 0; f < _BUS_FEATURE_MAX; f++) {
                const char *name = bus_feature_to_string(f), *member = bus_feature_member(f);

                complete = complete && name && bus_feature_lacking(f) && strncmp(bus_feature_lacking(f), "no ", 3) == 0;
                unique = unique && bus_feature_from_string(name) == f;
                round_trip = round_trip && (!member || bus_feature_from_member(member) == f);
        }
        CHECK(complete, "every feature has a name and words for its absence (\"no ...\")");
        CHECK(unique, "every name is one feature's");
        CHECK(round_trip, "every feature's member leads back to it");
        CHECK(bus_feature_from_member("Noise") == BUS_FEATURE_NOISE &&
                      bus_feature_from_member("NoiseReads") == BUS_FEATURE_NOISE &&
                      bus_feature_from_member("LastMeasurement") == BUS_FEATURE_MEASUREMENT,
              "a feature's other members lead to it too");
        CHECK(bus_feature_from_member("ListSettings") == _BUS_FEATURE_INVALID &&
                      bus_feature_from_member("Version") == _BUS_FEATURE_INVALID && bus_feature_from_member(NULL) < 0,
              "what every lowlatd has is no feature");
        CHECK(!bus_feature_to_string(_BUS_FEATURE_MAX) && !bus_feature_member(_BUS_FEATURE_INVALID) &&
                      !bus_feature_lacking(_BUS_FEATURE_MAX),
              "out of range: NULL");
        CHECK(bus_feature_member(BUS_FEATURE_CHECK_DETAILS) == NULL, "check-details shows in no member of its own");
}

static void test_socket_path(void) {
        _cleanup_free_ char *plain = bus_address_socket_path("unix:path=/run/dbus/system_bus_socket");
        _cleanup_free_ char *escaped = bus_address_socket_path("unix:path=/tmp/a%2db%2Cc,guid=0123;tcp:host=x");
        _cleanup_free_ char *tcp = bus_address_socket_path("tcp:host=localhost,port=1");
        _cleanup_free_ char *abstract = bus_address_socket_path("unix:abstract=/tmp/dbus-x");
        _cleanup_free_ char *bad_escape = bus_address_socket_path("unix:path=/tmp/%zz%4");

        CHECK_STR(plain, "/run/dbus/system_bus_socket", "unix:path=: the path");
        CHECK_STR(escaped, "/tmp/a-b,c", "%XX unescaped, up to the next key or address");
        CHECK(!tcp && !abstract && !bus_address_socket_path(NULL), "tcp:, unix:abstract=, none: no path");
        CHECK(!bad_escape, "a % not followed by two hex digits: no path (sd-bus refuses the address)");
        _cleanup_free_ char *later = bus_address_socket_path("unix:guid=0123,path=/tmp/later%3bx;unix:path=/y");
        CHECK_STR(later, "/tmp/later;x", "path= after another key of the first address");
        CHECK(!bus_address_socket_path("unix:path=,guid=1") && !bus_address_socket_path("unix:guid=1;unix:path=/y"),
              "an empty path, or none in the first address: no path");

        unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
        CHECK_STR(bus_system_address(), BUS_SYSTEM_ADDRESS_DEFAULT, "no $DBUS_SYSTEM_BUS_ADDRESS: the default");
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/tmp/x", 1);
        CHECK_STR(bus_system_address(), "unix:path=/tmp/x", "$DBUS_SYSTEM_BUS_ADDRESS");
}

int main(void) {
        test_features();
        test_socket_path();
        return tap_finish();
}
