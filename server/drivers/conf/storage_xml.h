/* Storage pool and volume XML, for both drivers: read with the shared
 * reader (xml_read.h) into the definitions below, and written back as
 * libvirt 9.0 writes them.  Pools of
 * type dir, fs, netfs and logical are modelled; the source elements kept
 * are <device path>, <host name port>, <dir path>, <name> and <format
 * type>; a volume keeps its name, type, sizes, target format, compat,
 * features and permissions and its backing store.  Elements the model
 * does not know are ignored, as libvirt's
 * parser ignores them.  Errors read as libvirt's (VIR_ERR_XML_ERROR and
 * its words). */
#ifndef RV_SERVER_DRIVERS_CONF_STORAGE_XML_H
#define RV_SERVER_DRIVERS_CONF_STORAGE_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

/* The largest pool or volume XML accepted: far above any real one (a few
 * hundred bytes), small enough that the pools and volumes the test driver
 * may hold stay within tens of MiB. */
enum { RV_STORAGE_XML_MAX = 16 * 1024, RV_POOL_MAX_DEVICES = 64 };

/* <permissions>: mode -1, owner -1, group -1 and no label mean unset. */
typedef struct rv_storage_perms {
    long mode, owner, group;
    char *label;
} rv_storage_perms;

typedef struct rv_pool_def {
    int type;                           /* RV_POOL_TYPE_* */
    char *name;
    unsigned char uuid[16];
    char *devices[RV_POOL_MAX_DEVICES]; /* <source><device path='...'/> */
    size_t ndevices;
    char *host;                         /* <source><host name='...' port='...'/> */
    int port;                           /* 0: none */
    char *src_dir;                      /* <source><dir path='...'/> */
    char *src_name;                     /* <source><name> */
    char *src_format;                   /* <source><format type='...'/> */
    char *target_path;
    rv_storage_perms perms;
    unsigned long long capacity, allocation, available;
} rv_pool_def;

enum { RV_POOL_TYPE_DIR, RV_POOL_TYPE_FS, RV_POOL_TYPE_NETFS, RV_POOL_TYPE_LOGICAL };

/* The XML word of a pool type ("dir"), and the RV_CONNECT_LIST_STORAGE_POOLS_
 * flag that selects it. */
const char *rv_pool_type_name(int type);
unsigned int rv_pool_type_list_flag(int type);

/* The storage pool capabilities XML (<storagepoolCapabilities>, as
 * libvirt 9.0 writes it): every pool type libvirt knows, supported when
 * types (RV_LIST_POOLS_* flags) has it, with the formats the parser
 * takes; NULL when out of memory. */
char *rv_pool_capabilities_xml(unsigned int types);

/* Parse a pool; the uuid is made up when absent.  *out NULL on error. */
int rv_pool_def_parse(const char *xml, rv_pool_def **out, rv_err *err);
/* The pool's XML, malloc'd, or NULL when out of memory. */
char *rv_pool_def_format(const rv_pool_def *def);
void rv_pool_def_free(rv_pool_def *def);

typedef struct rv_vol_def {
    char *name;
    char *key;                          /* set by the pool: the path */
    int type;                           /* RV_STORAGE_VOL_* */
    unsigned long long capacity, allocation;
    int has_allocation;
    char *path;                         /* set by the pool */
    char *format;                       /* NULL: none written */
    char *compat;                       /* <compat>: "1.1", ...; NULL: none */
    int features;                       /* <features> given (maybe empty) */
    int lazy_refcounts;                 /* <features><lazy_refcounts/> */
    rv_storage_perms perms;
    /* What only a volume on disk has (the QEMU driver's): its file's
     * size (<physical>) and times (<timestamps>), seconds and ns. */
    int has_file_info;
    unsigned long long physical;
    long long atime[2], mtime[2], ctime[2];
    char *backing_path;                 /* <backingStore>; NULL: none */
    char *backing_format;
    rv_storage_perms backing_perms;
    /* The test driver's bytes of it (test_vol_stream.c); NULL: zeros. */
    struct rv_vol_content *content;
} rv_vol_def;

/* Drop a reference to a volume's content (test_vol_stream.c). */
void rv_vol_content_unref(struct rv_vol_content *content);

/* Parse a volume for a pool of pool_type (a dir, fs or netfs pool's
 * volumes default to format raw; a logical pool's have none). */
int rv_vol_def_parse(const char *xml, int pool_type, rv_vol_def **out, rv_err *err);
char *rv_vol_def_format(const rv_vol_def *def);
void rv_vol_def_free(rv_vol_def *def);

/* Whether type names a pool type libvirt 9.0 knows (modelled or not). */
bool rv_pool_type_known(const char *type);

/* The host name a <source> specification (CONNECT_FIND_STORAGE_POOL_SOURCES)
 * names, malloc'd in *host, or NULL when it names none. */
int rv_pool_source_spec_host(const char *xml, char **host, rv_err *err);
/* libvirt's test driver's answer for netfs sources on host, malloc'd. */
char *rv_pool_netfs_sources(const char *host);

/* The XML word of a volume type ("file", "block", ...). */
const char *rv_vol_type_name(int type);

/* ---- on an object list (objlist.h): a driver's pool object begins with
 * its rv_pool_def pointer; state_of gives its RV_OBJ_* bits; the pool
 * type's list flags are the kind's more_flags. ---- */
const char *rv_pool_obj_name(const void *obj);
const unsigned char *rv_pool_obj_uuid(const void *obj);
unsigned int rv_pool_obj_type_flag(const void *obj);
#define RV_POOL_OBJ_KIND(from_, state_of_)                                             \
    { .what = "pool", .whats = "storage pools", .not_found = "Storage pool not found", \
      .lookup_what = "storage pool", .from = (from_), .no_object = RV_ERR_NO_STORAGE_POOL, \
      .name_of = rv_pool_obj_name, .uuid_of = rv_pool_obj_uuid, .state_of = (state_of_), \
      .more_flags_of = rv_pool_obj_type_flag, .more_flags = ~0x3fu }

#endif
