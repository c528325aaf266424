/* Taps and bridges through the kernel's ioctls (see qemu_link.h).  Each
 * call is a few system calls that do not wait, so they run on the loop. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_bridge.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_link.h"

RV_LOG_CATEGORY("drivers.qemu.link");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* A system call's failure, saying what CAP_NET_ADMIN has to do with it. */
static int sys_fail(rv_err *err, int errnum, const char *what, const char *link)
{
    if (errnum == EPERM || errnum == EACCES)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: cannot %s '%s': remvirtd lacks CAP_NET_ADMIN here (%s)",
                    what, link, strerror(errnum));
    return fail(err, RV_ERR_SYSTEM_ERROR, "cannot %s '%s': %s", what, link, strerror(errnum));
}

static void set_name(struct ifreq *ifr, const char *name)
{
    memset(ifr, 0, sizeof(*ifr));
    snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", name);
}

/* ioctl on a throw-away socket; errno kept on failure. */
static int link_ioctl(unsigned long request, struct ifreq *ifr)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    int rc = ioctl(s, request, ifr);
    int saved = errno;
    close(s);
    errno = saved;
    return rc;
}

bool rv_qemu_link_exists(const char *name)
{
    return if_nametoindex(name) != 0;
}

static int set_up(const char *name, bool up)
{
    struct ifreq ifr;
    set_name(&ifr, name);
    if (link_ioctl(SIOCGIFFLAGS, &ifr) < 0)
        return -1;
    ifr.ifr_flags = (short)(up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP);
    return link_ioctl(SIOCSIFFLAGS, &ifr);
}

int rv_qemu_tap_create(const char *want, const unsigned char mac[6], const char *bridge,
                       char name[RV_LINK_NAME_MAX + 1], rv_err *err)
{
    if (want && (strlen(want) > RV_LINK_NAME_MAX || strchr(want, '%') || strchr(want, '/')))
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: invalid interface target dev '%s'", want);
    /* TUNSETIFF would take over an existing persistent tap of that name. */
    if (want && rv_qemu_link_exists(want))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: interface target dev '%s' already exists",
                    want);
    int bridge_index = (int)if_nametoindex(bridge);
    if (!bridge_index)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: the host has no bridge '%s'", bridge);
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return sys_fail(err, errno, "open", "/dev/net/tun");
    struct ifreq ifr;
    set_name(&ifr, want ? want : "vnet%d");     /* the kernel picks the first free N */
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        int e = errno;
        close(fd);
        return sys_fail(err, e, "create the tap", want ? want : "vnet%d");
    }
    snprintf(name, RV_LINK_NAME_MAX + 1, "%s", ifr.ifr_name);

    const char *step = "set the MAC address of";
    struct ifreq req;
    set_name(&req, name);
    req.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    memcpy(req.ifr_hwaddr.sa_data, mac, 6);
    req.ifr_hwaddr.sa_data[0] = (char)0xfe;
    int rc = link_ioctl(SIOCSIFHWADDR, &req);
    if (rc == 0) {
        step = "set the MTU of";
        set_name(&req, bridge);
        rc = link_ioctl(SIOCGIFMTU, &req);
        int mtu = req.ifr_mtu;
        set_name(&req, name);
        req.ifr_mtu = mtu;
        rc = rc < 0 ? rc : link_ioctl(SIOCSIFMTU, &req);
    }
    if (rc == 0) {
        step = "attach to its bridge the tap";
        set_name(&req, bridge);
        req.ifr_ifindex = (int)if_nametoindex(name);
        rc = link_ioctl(SIOCBRADDIF, &req);
    }
    if (rc == 0) {
        step = "bring up";
        rc = set_up(name, true);
    }
    if (rc < 0) {
        int e = errno;
        close(fd);      /* not persistent: the tap goes with it */
        return sys_fail(err, e, step, name);
    }
    RV_DEBUG("tap %s on bridge %s", name, bridge);
    return fd;
}

/* The link that already has an address in address/prefix, if any. */
static bool subnet_taken(uint32_t address, unsigned prefix, char who[IF_NAMESIZE])
{
    uint32_t mask = prefix ? ~0u << (32 - prefix) : 0;
    struct ifaddrs *all = NULL;
    bool taken = false;
    if (getifaddrs(&all) < 0)
        return false;
    for (struct ifaddrs *a = all; a && !taken; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_netmask)
            continue;
        uint32_t have = ntohl(((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr);
        uint32_t have_mask = ntohl(((struct sockaddr_in *)a->ifa_netmask)->sin_addr.s_addr);
        uint32_t both = mask & have_mask;     /* the wider of the two subnets */
        if ((have & both) == (address & both)) {
            snprintf(who, IF_NAMESIZE, "%s", a->ifa_name);
            taken = true;
        }
    }
    freeifaddrs(all);
    return taken;
}

static int set_ipv4(unsigned long request, const char *name, uint32_t value)
{
    struct ifreq ifr;
    set_name(&ifr, name);
    struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(value);
    return link_ioctl(request, &ifr);
}

/* mac: "52:54:00:..."; -1 with errno EINVAL when it is not one. */
static int set_mac(const char *name, const char *mac)
{
    struct ifreq ifr;
    unsigned b[6];
    char end;
    if (sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &end) != 6) {
        errno = EINVAL;
        return -1;
    }
    set_name(&ifr, name);
    ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    for (int i = 0; i < 6; i++)
        ifr.ifr_hwaddr.sa_data[i] = (char)b[i];
    return link_ioctl(SIOCSIFHWADDR, &ifr);
}

static void set_forward_delay_zero(const char *name)
{
    char path[96];
    snprintf(path, sizeof(path), "/sys/class/net/%s/bridge/forward_delay", name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1)
        RV_DEBUG("cannot set the forward delay of bridge %s to 0", name);
    if (fd >= 0)
        close(fd);
}

int rv_qemu_bridge_create(const char *name, const char *mac, uint32_t address, unsigned prefix,
                          rv_err *err)
{
    char who[IF_NAMESIZE];
    if (strlen(name) > RV_LINK_NAME_MAX || strchr(name, '/') || strchr(name, '%'))
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: invalid bridge name '%s'",
                    name);
    if (rv_qemu_link_exists(name))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: bridge name '%s' is already in use", name);
    if (prefix && subnet_taken(address, prefix, who)) {
        struct in_addr in = { htonl(address) };
        char text[INET_ADDRSTRLEN];
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: network %s/%u conflicts with an address of "
                    "interface '%s'", inet_ntop(AF_INET, &in, text, sizeof(text)), prefix, who);
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sys_fail(err, errno, "open a socket for", name);
    int rc = ioctl(s, SIOCBRADDBR, name);
    int e = errno;
    close(s);
    if (rc < 0)
        return sys_fail(err, e, "create the bridge", name);
    set_forward_delay_zero(name);
    const char *step = "set the MAC address of";
    rc = mac ? set_mac(name, mac) : 0;
    if (rc == 0 && prefix) {
        step = "set the address of";
        rc = set_ipv4(SIOCSIFADDR, name, address);
    }
    if (rc == 0 && prefix) {
        step = "set the netmask of";
        rc = set_ipv4(SIOCSIFNETMASK, name, prefix ? ~0u << (32 - prefix) : 0);
    }
    if (rc == 0) {
        step = "bring up";
        rc = set_up(name, true);
    }
    if (rc < 0) {
        e = errno;
        rv_err ignored = { 0 };
        rv_qemu_bridge_delete(name, &ignored);
        rv_err_clear(&ignored);
        return sys_fail(err, e, step, name);
    }
    RV_INFO("bridge %s created", name);
    return 0;
}

int rv_qemu_bridge_delete(const char *name, rv_err *err)
{
    if (!rv_qemu_link_exists(name))
        return 0;
    (void)set_up(name, false);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sys_fail(err, errno, "open a socket for", name);
    int rc = ioctl(s, SIOCBRDELBR, name);
    int e = errno;
    close(s);
    if (rc < 0)
        return sys_fail(err, e, "delete the bridge", name);
    RV_INFO("bridge %s deleted", name);
    return 0;
}

static int read_counter(const char *link, const char *counter, unsigned long long *value)
{
    char path[128], text[32];
    snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", link, counter);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    return sscanf(text, "%llu", value) == 1 ? 0 : -1;
}

int rv_qemu_link_guest_counters(const char *name, unsigned long long out[8])
{
    /* Host side first; /proc/net/dev's receive drops include the misses. */
    static const char *const host[8] = { "rx_bytes", "rx_packets", "rx_errors", "rx_dropped",
                                         "tx_bytes", "tx_packets", "tx_errors", "tx_dropped" };
    unsigned long long v[8], missed = 0;
    if (strchr(name, '/'))
        return -1;
    for (int i = 0; i < 8; i++)
        if (read_counter(name, host[i], &v[i]) < 0)
            return -1;
    if (read_counter(name, "rx_missed_errors", &missed) == 0)
        v[3] += missed;
    /* What the tap received the guest sent. */
    for (int i = 0; i < 4; i++) {
        out[i] = v[4 + i];
        out[4 + i] = v[i];
    }
    return 0;
}

int *rv_qemu_domain_taps_open(rv_qemu_domain_def *live, rv_err *err)
{
    int *fds = malloc((live->ninterfaces + 1) * sizeof(int));
    if (!fds) {
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < live->ninterfaces; i++)
        fds[i] = -1;
    for (size_t i = 0; i < live->ninterfaces; i++) {
        rv_qemu_interface *iface = &live->interfaces[i];
        if (iface->type == RV_QEMU_NET_USER)
            continue;
        const char *want = iface->ifname && strncmp(iface->ifname, "vnet", 4) != 0 ? iface->ifname
                                                                                   : NULL;
        char name[RV_LINK_NAME_MAX + 1];
        char *copy = NULL;
        if ((fds[i] = rv_qemu_tap_create(want, iface->mac, iface->bridge, name, err)) < 0 ||
            !(copy = strdup(name))) {
            if (fds[i] >= 0)
                fail(err, RV_ERR_NO_MEMORY, "out of memory");
            rv_qemu_domain_taps_close(fds, live->ninterfaces);
            return NULL;
        }
        free(iface->ifname);
        iface->ifname = copy;
    }
    return fds;
}

void rv_qemu_domain_taps_close(int *fds, size_t n)
{
    for (size_t i = 0; fds && i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
}
