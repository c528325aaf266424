/* Writing XML as libvirt writes it: the drivers print their documents
 * with stdio, a field at a time, and escape every text and attribute
 * value the same way. */
#ifndef RV_SERVER_DRIVERS_CONF_XML_WRITE_H
#define RV_SERVER_DRIVERS_CONF_XML_WRITE_H

#include <stdio.h>

/* s with the five XML special characters as entities (&lt; &gt; &amp;
 * &apos; &quot;), fit for element text and attributes in either quote. */
void rv_xml_put_escaped(FILE *fp, const char *s);

#endif
