/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [daemon] profile: named configurations read before the main file (profiles.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/keys.h"
#include "config/profiles.h"
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
        config_words_free(profiles, n);
}

/* One word of a profile list: a profile name, not named yet. */
static bool profile_word_is_good(ConfigParse *p, const ConfigKey *key, char *const *list, size_t n, const char *word) {
        if (!config_profile_name_is_valid(word)) {
                config_key_error(p, key, word, "a profile name (letters, digits, '-', '_' and '.', e.g. network-latency)",
                                 "none");
                return false;
        }
        for (size_t i = 0; i < n; i++)
                if (streq(list[i], word)) {
                        config_error(p, "profile: '%s' is named twice", word);
                        return false;
                }
        return true;
}

int config_parse_profiles(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        Config *c = object;

        return config_parse_words(p, key, value, profile_word_is_good, NULL, &c->profiles, &c->n_profiles);
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
