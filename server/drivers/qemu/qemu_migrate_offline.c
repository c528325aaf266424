/* An offline migration's definition between PREPARE3 and FINISH3, for the
 * steps with plain arguments: their FINISH3 names the domain only
 * (destination_name), where the one with parameters carries the XML
 * again.  PREPARE3 (offline) keeps the XML it checked under the domain's
 * name; FINISH3 takes it.  A few at most (the oldest dropped): one per
 * offline migration under way to this host, and one never finished
 * (its client gone) does not stay for ever. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("qemu.migrate");

#define KEPT_MAX 8

static struct kept {
    char *name, *xml;
} kept[KEPT_MAX];

static void drop(int i)
{
    free(kept[i].name);
    free(kept[i].xml);
    memmove(&kept[i], &kept[i + 1], (KEPT_MAX - 1 - i) * sizeof(kept[0]));
    memset(&kept[KEPT_MAX - 1], 0, sizeof(kept[0]));
}

static int find(const char *name)
{
    for (int i = 0; i < KEPT_MAX && kept[i].name; i++)
        if (strcmp(kept[i].name, name) == 0)
            return i;
    return -1;
}

int rv_qemu_migrate_offline_keep(const char *name, const char *xml)
{
    int i = find(name);
    if (i >= 0)
        drop(i);
    if (kept[KEPT_MAX - 1].name) {
        RV_WARN("offline migration of '%s' never finished: forgotten", kept[0].name);
        drop(0);
    }
    for (i = 0; kept[i].name; i++)
        ;
    kept[i].name = strdup(name);
    kept[i].xml = strdup(xml);
    if (!kept[i].name || !kept[i].xml) {
        drop(i);
        return -1;
    }
    return 0;
}

char *rv_qemu_migrate_offline_take(const char *name)
{
    int i = find(name);
    if (i < 0)
        return NULL;
    char *xml = kept[i].xml;
    kept[i].xml = NULL;
    drop(i);
    return xml;
}

void rv_qemu_migrate_offline_cleanup(void)
{
    while (kept[0].name)
        drop(0);
}
