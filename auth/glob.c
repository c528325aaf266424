#include "auth/glob.h"

#include <fnmatch.h>
#include <stddef.h>

int rv_glob_list_match(const char *const *globs, const char *name)
{
    if (!globs)
        return 1;
    for (size_t i = 0; globs[i]; i++)
        if (fnmatch(globs[i], name, 0) == 0)
            return 1;
    return 0;
}
