/* CPU feature names where libvirt's spelling is not QEMU's (pclmuldq is
 * QEMU's pclmulqdq, lahf_lm its lahf-lm, ...): the XML speaks libvirt's,
 * the command line and QMP QEMU's. */
#ifndef RV_QEMU_CPU_NAMES_H
#define RV_QEMU_CPU_NAMES_H

/* QEMU's name for a feature libvirt names; name itself when they agree. */
const char *rv_cpu_qemu_name(const char *name);
/* libvirt's name for a feature QEMU names; qemu itself when they agree. */
const char *rv_cpu_libvirt_name(const char *qemu);

#endif
