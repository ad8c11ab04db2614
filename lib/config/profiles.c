/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [daemon] profile: named configurations read before the main file (profiles.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/keys.h"
#include "config/profiles.h"
#include "basic/array.h"
#include "basic/util.h"

bool config_profile_name_is_valid(const char *name) {
        size_t n = strlen(name);

        if (n == 0 || n > PROFILE_NAME_MAX || name[0] == '.' || name[0] == '-')
                return false;
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("-_.", *p))
                        return false;
        return true;
}

void config_profiles_free(char **profiles, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(profiles[i]);
        free(profiles);
}

int config_parse_profiles(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        Config *c = object;
        _cleanup_free_ char *copy = strdup(value);
        char **list = NULL, *word, *save = NULL;
        size_t n = 0, allocated = 0;
        bool bad = false;

        if (!copy)
                return p->oom = -ENOMEM;
        if (streq(value, "none")) {
                config_profiles_free(c->profiles, c->n_profiles);
                c->profiles = NULL;
                c->n_profiles = 0;
                return 0;
        }
        for (word = strtok_r(copy, " \t", &save); word && !p->oom; word = strtok_r(NULL, " \t", &save)) {
                bool again = false;

                if (!config_profile_name_is_valid(word)) {
                        config_key_error(p, key, word,
                                         "a profile name (letters, digits, '-', '_' and '.', e.g. network-latency)",
                                         "none");
                        bad = true;
                        continue;
                }
                for (size_t i = 0; i < n; i++)
                        again = again || streq(list[i], word);
                if (again) {
                        config_error(p, "profile: '%s' is named twice", word);
                        bad = true;
                        continue;
                }
                if (array_grow(&list, &allocated, n + 1) < 0 || !(list[n] = strdup(word)))
                        p->oom = -ENOMEM;
                else
                        n++;
        }
        if (bad || p->oom) {
                config_profiles_free(list, n);
                return p->oom ?: -EINVAL;
        }
        config_profiles_free(c->profiles, c->n_profiles);
        c->profiles = list;
        c->n_profiles = n;
        return 0;
}

char *config_profile_user_dir(const char *config_path) {
        const char *slash = strrchr(config_path, '/');

        if (!slash)
                return strdup(PROFILES_USER_SUBDIR);
        return strdup_printf("%.*s/" PROFILES_USER_SUBDIR, (int) (slash - config_path), config_path);
}

const char *config_profiles_shipped_dir(void) {
        return secure_getenv("LOWLATD_PROFILES_DIR") ?: LOWLATD_PROFILES_DIR;
}

int config_profile_find(const char *config_path, const char *name, char **ret) {
        _cleanup_free_ char *user_dir = config_profile_user_dir(config_path);
        const char *dirs[] = { user_dir, config_profiles_shipped_dir() };

        if (!user_dir)
                return -ENOMEM;
        if (!config_profile_name_is_valid(name))
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                char *file = strdup_printf("%s/%s.conf", dirs[i], name);
                struct stat st;

                if (!file)
                        return -ENOMEM;
                if (stat(file, &st) == 0) {
                        *ret = file;
                        return 0;
                }
                free(file);
        }
        return -ENOENT;
}
