/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl against a lowlatd of another version: what the daemon offers (its Features
 * property, or for one older than that its introspection), its version, the words for what
 * an older one lacks, and the reading of structs a newer one has grown at their end. The
 * rules both sides keep are lowlatd(8)'s COMPATIBILITY. */
#include <string.h>

#include "bus-features.h"
#include "bus-names.h"
#include "client.h"
#include "version.h"
#include "basic/macro.h"
#include "basic/util.h"

static char **strv_free(char **l) {
        for (char **i = l; i && *i; i++)
                free(*i);
        free(l);
        return NULL;
}

int ctl_daemon_version(sd_bus *bus, char **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        return sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "Version", &error, ret);
}

/* The Features property: 1 with the list, 0 for a lowlatd older than the property (*ret
 * NULL), -errno when it cannot be asked. */
static int daemon_features(sd_bus *bus, char ***ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        char **features = NULL;
        int r;

        r = sd_bus_get_property_strv(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "Features", &error, &features);
        if (r < 0 && sd_bus_error_has_names(&error, SD_BUS_ERROR_UNKNOWN_PROPERTY, SD_BUS_ERROR_INVALID_ARGS)) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return r;
        *ret = features;
        return 1;
}

/* A lowlatd from before Features: whether its introspection names member. sd-bus writes
 * the XML itself, one element per line in a fixed form, so a plain search is exact. */
static int introspection_has_member(sd_bus *bus, const char *member) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *method = NULL, *property = NULL;
        const char *xml, *interface;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, "org.freedesktop.DBus.Introspectable", "Introspect", &error,
                               &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &xml);
        if (r < 0)
                return r;
        interface = strstr(xml, "<interface name=\"" BUS_INTERFACE "\">");
        if (!interface)
                return 0;
        method = strdup_printf("<method name=\"%s\">", member);
        property = strdup_printf("<property name=\"%s\" ", member);
        if (!method || !property)
                return -ENOMEM;
        /* Up to the end of this interface's element. */
        const char *end = strstr(interface, "</interface>");
        const char *m = strstr(interface, method), *p = strstr(interface, property);
        return (m && (!end || m < end)) || (p && (!end || p < end));
}

int ctl_daemon_offers(sd_bus *bus, BusFeature feature) {
        char **features = NULL;
        const char *member;
        int r;

        r = daemon_features(bus, &features);
        if (r > 0) {
                bool found = false;
                for (char **f = features; *f; f++)
                        found = found || streq(*f, bus_feature_to_string(feature));
                strv_free(features);
                return found;
        }
        if (r < 0)
                return r;
        member = bus_feature_member(feature);
        /* A feature no member shows came after Features itself. */
        return member ? introspection_has_member(bus, member) : 0;
}

char *ctl_lacking_text(sd_bus *bus, const char *member) {
        _cleanup_free_ char *version = NULL;
        BusFeature feature = bus_feature_from_member(member);
        const char *lacking = bus_feature_lacking(feature);

        if (bus && ctl_daemon_version(bus, &version) < 0)
                version = mfree(version);
        if (lacking)
                return strdup_printf("%s%s has %s; upgrade it", version ? "lowlatd " : "this lowlatd", version ?: "",
                                     lacking);
        return strdup_printf("%s%s has no %s, which this lowlatctl needs; upgrade it",
                             version ? "lowlatd " : "this lowlatd", version ?: "", member ?: "such member");
}

/* ---- lowlatctl --version ------------------------------------------------------------ */

/* "(features: a b c)", with what this lowlatctl knows of and the daemon lacks after it. */
static void features_print(FILE *f, char **features) {
        bool first = true;

        fputs(" (features:", f);
        for (char **i = features; *i; i++)
                fprintf(f, " %s", *i);
        for (BusFeature k = 0; k < _BUS_FEATURE_MAX; k++) {
                bool found = false;
                for (char **i = features; *i; i++)
                        found = found || streq(*i, bus_feature_to_string(k));
                if (!found) {
                        fprintf(f, "%s %s", first ? "; lacks:" : "", bus_feature_to_string(k));
                        first = false;
                }
        }
        fputs(first ? ")\n" : "; upgrade it)\n", f);
}

void ctl_print_versions(FILE *f) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *why = NULL, *version = NULL;
        char **features = NULL;
        int r;

        fprintf(f, "lowlatctl %s\n", LOWLATD_VERSION);
        r = ctl_bus_connect(&bus, &why);
        if (r >= 0) {
                r = sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "Version", &error, &version);
                if (r < 0)
                        why = ctl_call_failure(bus, "Reading Version", "Version", &error, r);
        }
        if (r < 0) {
                fputs("lowlatd: version unknown: ", f);
                print_escaped(f, why ?: strerror(-r));
                fputc('\n', f);
                return;
        }
        fputs("lowlatd ", f);
        print_escaped(f, version);
        r = daemon_features(bus, &features);
        if (r > 0)
                features_print(f, features);
        else if (r == 0)
                fputs(" (no Features property: older than this lowlatctl; upgrade it)\n", f);
        else
                fprintf(f, " (features unknown: %s)\n", strerror(-r));
        strv_free(features);
}

/* ---- Structs a newer lowlatd has grown --------------------------------------------- */

/* D-Bus complete types are prefix-free: a signature that starts with fields holds those
 * fields first, whatever follows. */
static int peek_struct(sd_bus_message *m, char want, const char *fields, const char **ret_contents) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r <= 0)
                return r;
        if (type != want)
                return -EBADMSG;
        if (want == 'a' && (contents[0] != '(' || strncmp(contents + 1, fields, strlen(fields)) != 0))
                return -EBADMSG;
        if (want == 'r' && strncmp(contents, fields, strlen(fields)) != 0)
                return -EBADMSG;
        *ret_contents = contents;
        return 1;
}

int ctl_enter_struct_array(sd_bus_message *m, const char *fields) {
        const char *contents;
        int r;

        r = peek_struct(m, 'a', fields, &contents);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        return sd_bus_message_enter_container(m, 'a', contents);
}

int ctl_enter_struct(sd_bus_message *m, const char *fields) {
        const char *contents;
        int r;

        r = peek_struct(m, 'r', fields, &contents);
        if (r <= 0)
                return r;
        r = sd_bus_message_enter_container(m, 'r', contents);
        return r < 0 ? r : 1;
}

int ctl_exit_struct(sd_bus_message *m) {
        int r;

        /* The fields this lowlatctl does not know, whatever their types. */
        while ((r = sd_bus_message_at_end(m, false)) == 0) {
                r = sd_bus_message_skip(m, NULL);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}
