/* Procedure names for logs and errors, from the generated table. */
#ifndef RV_COMMON_PROC_NAMES_H
#define RV_COMMON_PROC_NAMES_H

/* "DOMAIN_GET_INFO" for (remote program, 16); NULL if unknown. */
const char *rv_proc_name(unsigned int prog, int proc);

#endif
