/* The migration cookie: libvirt's <qemu-migration> document, passed
 * between the steps (docs/wire-protocol.md section 15).  remvirtd sends
 * what a libvirtd 9.0 at the other end requires, as observed from its
 * debug log (qemuMigrationCookieParse / Format): the domain's name and
 * UUID, the sender's host name and host UUID (libvirtd refuses a cookie
 * without them, or naming its own host), and, answering PREPARE3, a
 * <capabilities> element: the migration capabilities this destination
 * offers for the source to turn on.  libvirtd 9.0 as source dereferences
 * it unchecked in PERFORM3 (its daemon crashed on a cookie without one);
 * remvirtd offers none, so the source turns on none it may leave off.
 * Of the cookies received, only PREPARE3's <nbd port> is read (the
 * storage copy's, qemu_migrate_storage.c). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/drivers/conf/xml_read.h"
#include "server/drivers/qemu/qemu_driver.h"

int rv_qemu_migrate_cookie(const rv_qemu_domain_def *def, bool with_caps, int nbd_port, char **val,
                           u_int *len, rv_err *err)
{
    char host[256] = "", hostuuid[37] = "";
    gethostname(host, sizeof(host) - 1);
    /* (none known: left out; a libvirtd at the other end then refuses) */
    bool have_uuid = rv_qemu_host_uuid(hostuuid);
    char uuid[37];
    const unsigned char *u = def->uuid;
    snprintf(uuid, sizeof(uuid),
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    /* (the name and host are XML-safe: libvirt's names are, and a host
     * name has no markup characters) */
    char nbd[64] = "";     /* (libvirt's element for the disks' NBD server) */
    if (nbd_port)
        snprintf(nbd, sizeof(nbd), "  <nbd port='%d'/>\n", nbd_port);
    int n = asprintf(val,
                     "<qemu-migration>\n  <name>%s</name>\n  <uuid>%s</uuid>\n"
                     "  <hostname>%s</hostname>\n%s%s%s%s%s</qemu-migration>\n",
                     def->name, uuid, host, have_uuid ? "  <hostuuid>" : "", hostuuid,
                     have_uuid ? "</hostuuid>\n" : "", with_caps ? "  <capabilities/>\n" : "", nbd);
    if (n < 0) {
        *val = NULL;
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "%s", "out of memory");
    }
    *len = (u_int)n + 1;    /* libvirt's cookies carry their NUL */
    return 0;
}

/* BEGIN3's domain XML: the live definition, a custom CPU's check='full'
 * sent as 'none'.  A running guest's custom CPU says check='full' (as
 * libvirtd's live XML does) but remvirtd lists no features in it: a
 * libvirtd destination would check the CPU QEMU gives it against the bare
 * model and refuse it ("guest CPU doesn't match specification: extra
 * features: hypervisor,lahf_lm" for qemu64 under TCG).  libvirtd's own
 * migratable XML has the defined check (none by default) and sends the
 * live CPU, features and all, in its cookie, which remvirtd cannot (it
 * does not know the features QEMU enabled); a definition's check='full'
 * (or one kept from a live XML by PERSIST_DEST) is not told apart.  The
 * same QEMU binary and machine type give the same CPU either way. */
/* A qemu-xhci without <controller ports>: remvirtd runs it with 15 ports
 * a bus (p2, p3), libvirtd 9.0 with QEMU's default, 4; the port count is
 * in the device's migration state ("Missing section footer for
 * ...xhci" from the destination QEMU otherwise).  So BEGIN3 sends the 15
 * remvirtd runs, and PREPARE3 gives a definition without ports the 4 its
 * (libvirtd) source runs. */
#define XHCI_REMVIRT_PORTS 15
#define XHCI_QEMU_PORTS 4

static bool unset_xhci(const rv_qemu_controller *c)
{
    return c->type == RV_QEMU_CTRL_USB && c->model == RV_QEMU_USB_QEMU_XHCI && c->ports == 0;
}

void rv_qemu_migrate_incoming_def(rv_qemu_domain_def *def)
{
    for (size_t i = 0; i < def->dev.ncontrollers; i++)
        if (unset_xhci(&def->dev.controllers[i]))
            def->dev.controllers[i].ports = XHCI_QEMU_PORTS;
}

char *rv_qemu_migrate_xml(qemu_dom *d)
{
    rv_qemu_domain_def *live = d->live;
    int check = live->cpu_check;
    if (live->cpu_mode == RV_QEMU_CPU_CUSTOM && check == 2)
        live->cpu_check = 0;
    rv_qemu_controller *xhci = NULL;    /* (one USB controller 0) */
    for (size_t i = 0; i < live->dev.ncontrollers && !xhci; i++)
        if (unset_xhci(&live->dev.controllers[i]))
            xhci = &live->dev.controllers[i];
    if (xhci)
        xhci->ports = XHCI_REMVIRT_PORTS;
    char *xml = rv_qemu_domain_format(live);
    live->cpu_check = check;
    if (xhci)
        xhci->ports = 0;
    return xml;
}

/* The URI PERFORM3 gives QEMU's migrate, malloc'd (NULL: no memory): a
 * libvirtd destination answers PREPARE3 with tcp://HOST:PORT, its URI
 * form, where QEMU takes tcp:HOST:PORT (remvirtd answers that form). */
char *rv_qemu_migrate_qemu_uri(const char *uri)
{
    if (strncmp(uri, "tcp://", 6) != 0)
        return strdup(uri);
    char *out = NULL;
    const char *h = uri + 6;
    size_t n = strcspn(h, "/?");
    if (asprintf(&out, "tcp:%.*s", (int)n, h) < 0)
        return NULL;
    return out;
}

#define COOKIE_PARSE_MAX (64 * 1024)

xmlNode *rv_qemu_migrate_cookie_read(const char *cookie, u_int len, xmlDoc **doc)
{
    *doc = NULL;
    if (!cookie || !len || cookie[len - 1] != '\0')
        return NULL;
    rv_err ignored = { 0 };
    xmlNode *root = rv_lx_read(cookie, COOKIE_PARSE_MAX, "qemu-migration", "cookie", RV_FROM_QEMU,
                               doc, &ignored);
    rv_err_clear(&ignored);
    return root;
}
