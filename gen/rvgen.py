#!/usr/bin/env python3
"""rvgen: turn remvirt's annotated .x files into C tables and the wire spec.

Reads the XDR subset the protocol files use (const, enum, struct, union,
typedef) plus the annotation comment above each value of
enum rv_remote_procedure, and writes:

  OUTDIR/server/rv_dispatch.gen.{h,c}   server procedure table and handler prototypes
  OUTDIR/client/rv_stubs.gen.{h,c}      one synchronous client call per procedure
  OUTDIR/client/remvirt-calls.gen.{h,c} the public functions of the @api generated
                                        procedures: declarations with their comments,
                                        bodies
  OUTDIR/client/libremvirt.gen.sym      libremvirt's version script: those functions
                                        and the hand-written ones (--manual-symbols)
  OUTDIR/common/rv_proc_names.gen.c     rv_proc_name() for every program
  OUTDIR/python/rv_protocol.py          the same constants for the Python tests
  DOCS (docs/procedures.md)             per-procedure wire layout, committed

With --procs-table (protocol/libvirt-remote-procs.tsv: every procedure
libvirt defines, with the public API it stands for), the table checks the
enum's numbers and names, and the dispatch table gets an entry for every
procedure remvirt does not implement, so that a call to one is refused
with VIR_ERR_NO_SUPPORT naming that API, as libvirtd refuses a function
its driver lacks.

A file is rewritten only when its content changes, so make rebuilds only
what depends on a real change.  With --check nothing is written: the exit
status says whether DOCS is up to date.

Standard library only: it runs before anything else is built.
"""

import argparse
import os
import re
import sys
import textwrap

# The procedure enum whose values carry annotations and drive the server
# dispatch table, the driver interface and the client stubs.
DISPATCH_ENUM = 'rv_remote_procedure'
# More annotated programs, served by the daemon itself: each gets its own
# dispatch table (server/rv_KEY_dispatch.gen.{h,c}) of hand-written
# handlers rvs_handle_KEY_NAME, and no client side or driver slots.
DAEMON_ENUMS = ('rv_admin_procedure',)

MAX_ANNOTATION = re.compile(r'([A-Za-z_]\w*)(?::([A-Z][A-Z0-9_]*))?')
# Argument fields that bound a result list: each needs its procedure's @max.
MAX_FIELD = re.compile(r'max\w*|nparams|ncpumaps')
ANNOTATIONS = {
    'stubs': ('both', 'server', 'client', 'none'),
    'auth': ('none', 'required'),
    'readonly': ('allow', 'deny'),
    # Who serves it on the server (@stubs both|server only):
    #   driver         a driver slot; the generated handler checks the
    #                  connection and the slot (NO_SUPPORT when unset) and calls it
    #   daemon         a hand-written rvs_handle_NAME in server/remote_procs.c
    #   daemon-driver  both: the hand-written handler does the daemon's part,
    #                  then calls the slot through the generated rvs_driver_NAME
    'handler': ('driver', 'daemon', 'daemon-driver'),
    # The public libremvirt function (@stubs both|client only):
    #   generated  gen/rvgen.py writes it, its declaration and its symbol
    #   manual     written by hand (client/*.c, declared in client/remvirt.h)
    #   none       no public function calls it (authentication, messages,
    #              a procedure a newer one replaced)
    'api': ('generated', 'manual', 'none'),
    # How a generated function hands over a result that is one int:
    #   bool      returned as 1 or 0
    #   count     returned; a negative one from the server is refused
    #   out       stored through a pointer parameter named after the field
    #   out-bool  the same, as 1 or 0
    'ret': ('bool', 'count', 'out', 'out-bool'),
    # The public name when it is not the procedure's (DOMAIN_UNDEFINE_FLAGS
    # stands for rv_domain_undefine); any rv_* identifier.
    'name': None,
    # An argument that says how many items the caller takes at most
    # (maxnames, nparams): FIELD, bounded by the result's one array of
    # items, or FIELD:CONST.  The generated handler refuses a value outside
    # 0..bound with VIR_ERR_RPC before the driver runs (@handler driver or
    # daemon-driver), and procedures.md states the bound.
    'max': MAX_ANNOTATION,
}
# Annotations a procedure may leave out, and what that means.
ANNOTATION_DEFAULTS = {'handler': 'daemon'}
# Left out only when they do not apply (checked in read_annotations).
OPTIONAL_ANNOTATIONS = ('api', 'ret', 'name', 'max')

# A procedure table is an array indexed by procedure number; refuse
# numbers that would make it absurdly large.
PROC_NUMBER_MAX = 65535

# The error domain (virErrorDomain) of a NO_SUPPORT reply: libvirt reports
# it from the module of the public API.  Observed from libvirtd 9.0 for
# domain, host, storage, network, nodedev, secret and nwfilter; the rest
# are the VIR_FROM_* values of libvirt's virterror.h for that module.
MODULE_ERROR_DOMAINS = {
    'domain': 20, 'host': 20, 'storage': 18, 'network': 19, 'nodedev': 22,
    'secret': 30, 'nwfilter': 33, 'interface': 26, 'snapshot': 35, 'checkpoint': 69,
    'admin': 62,
}

# Built-in XDR types: wire name and encoded size in bytes.  rpcgen sends
# char and short as full 4-byte integers.
PRIMITIVES = {
    'int': ('int', 4),
    'unsigned int': ('unsigned int', 4),
    'hyper': ('hyper', 8),
    'unsigned hyper': ('unsigned hyper', 8),
    'char': ('int (char)', 4),
    'unsigned char': ('unsigned int (unsigned char)', 4),
    'short': ('int (short)', 4),
    'unsigned short': ('unsigned int (unsigned short)', 4),
    'float': ('float', 4),
    'double': ('double', 8),
    'bool': ('bool', 4),
}

KEYWORDS = {'const', 'enum', 'struct', 'union', 'typedef', 'switch', 'case',
            'default', 'void', 'opaque', 'string', 'unsigned', 'int', 'hyper',
            'char', 'short', 'long', 'float', 'double', 'bool', 'quadruple',
            'program', 'version'}


NUMBER = re.compile(r'-?(?:0[xX][0-9a-fA-F]+|[0-9]+)')


class GenError(Exception):
    """A problem in an input file, reported as path:line: message."""

    def __init__(self, path, line, message):
        super().__init__(f'{path}:{line}: {message}' if line else f'{path}: {message}')
        self.path = path
        self.line = line
        self.message = message


# ------------------------------------------------------------------ lexer

class Token:
    __slots__ = ('kind', 'text', 'line')

    def __init__(self, kind, text, line):
        self.kind = kind      # 'ident', 'num', 'punct', 'eof'
        self.text = text
        self.line = line


class Comment:
    __slots__ = ('text', 'line')

    def __init__(self, text, line):
        self.text = text      # without the /* */ or // markers
        self.line = line      # where it starts


_LEX = re.compile(r'''
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<block>/\*.*?\*/)
  | (?P<line>//[^\n]*)
  | (?P<num>-?(?:0[xX][0-9a-fA-F]+|[0-9]+))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[{}()\[\]<>;,:=*])
''', re.S | re.X)



def internal_api(name):
    """The internal libvirt function behind a migration step (no public
    API: the procs table says '-'), as libvirt names it in its read-only
    and unsupported errors: DOMAIN_MIGRATE_BEGIN3_PARAMS ->
    virDomainMigrateBegin3Params.  None for other procedures."""
    if not name.startswith('DOMAIN_MIGRATE_'):
        return None
    return 'vir' + ''.join(w.capitalize() for w in name.split('_'))

def lex(path, text):
    """Split text into tokens.  Returns (tokens, comments_before, passthrough):
    comments_before[i] lists the comments between token i-1 and token i;
    passthrough lists (line, text) of '%' lines, which go to rpcgen only."""
    tokens, comments_before, passthrough = [], [], []
    pending = []
    line = 1
    pos = 0
    at_line_start = True
    while pos < len(text):
        if at_line_start and text[pos] == '%':
            end = text.find('\n', pos)
            end = len(text) if end < 0 else end
            passthrough.append((line, text[pos + 1:end]))
            pos = end
            continue
        m = _LEX.match(text, pos)
        if not m:
            if text.startswith('/*', pos):
                raise GenError(path, line, 'unterminated comment')
            raise GenError(path, line, f'unexpected character {text[pos]!r}')
        kind = m.lastgroup
        value = m.group()
        at_line_start = kind == 'nl'
        if kind == 'block':
            pending.append(Comment(value[2:-2], line))
        elif kind == 'line':
            pending.append(Comment(value[2:], line))
        elif kind in ('num', 'ident', 'punct'):
            tokens.append(Token(kind, value, line))
            comments_before.append(pending)
            pending = []
        line += value.count('\n')
        pos = m.end()
    tokens.append(Token('eof', '', line))
    comments_before.append(pending)
    return tokens, comments_before, passthrough


# ------------------------------------------------------------------ model

class Decl:
    """One declaration: a struct field, union arm, typedef or discriminant.
    kind: 'void', 'plain', 'optional', 'fixed' (name[N]) or 'var' (name<N>);
    size: the bound token (a number or a constant's name) for fixed/var."""

    def __init__(self, path, line, kind, type_name=None, name=None, size=None):
        self.path = path
        self.line = line
        self.kind = kind
        self.type_name = type_name
        self.name = name
        self.size = size
        self.comment = None   # comment on the same line, after the ';'


class Definition:
    def __init__(self, what, name, path, line):
        self.what = what      # 'const', 'enum', 'struct', 'union', 'typedef'
        self.name = name
        self.path = path
        self.line = line


class Const(Definition):
    def __init__(self, name, path, line, value):
        super().__init__('const', name, path, line)
        self.value = value    # a token text: number or another name


class EnumValue:
    def __init__(self, name, value, line, comments, prev_line):
        self.name = name
        self.value = value    # token text
        self.line = line
        self.comments = comments  # comments between the previous token and it
        self.prev_line = prev_line  # line of that previous token ('{' or ',')


class Enum(Definition):
    def __init__(self, name, path, line, values):
        super().__init__('enum', name, path, line)
        self.values = values


class Struct(Definition):
    def __init__(self, name, path, line, fields):
        super().__init__('struct', name, path, line)
        self.fields = fields


class Union(Definition):
    def __init__(self, name, path, line, discriminant, arms, default):
        super().__init__('union', name, path, line)
        self.discriminant = discriminant
        self.arms = arms          # list of ([case value tokens], Decl)
        self.default = default    # Decl or None: other values are invalid


class Typedef(Definition):
    def __init__(self, decl):
        super().__init__('typedef', decl.name, decl.path, decl.line)
        self.decl = decl


class XFile:
    def __init__(self, path, display):
        self.path = path
        self.display = display    # "protocol/rv_remote.x", stable across build dirs
        self.definitions = []
        self.includes = []        # .x files behind %#include "x.h"


class Procedure:
    def __init__(self, program, enum_value, number, short_name, base):
        self.program = program
        self.enum_value = enum_value      # RV_PROC_DOMAIN_GET_INFO
        self.number = number
        self.name = short_name            # DOMAIN_GET_INFO
        self.base = base                  # rv_domain_get_info
        self.args = None                  # Struct or None (void)
        self.ret = None
        self.msg = None                   # Struct: the server sends it as a MESSAGE
        self.stubs = None
        self.auth = None
        self.readonly = None
        self.handler = None               # @handler
        self.api = None                   # "virDomainGetInfo" (from the procs table)
        self.module = None                # "domain": sets NO_SUPPORT's error domain
        self.client_api = None            # @api: generated, manual or none
        self.ret_as = None                # @ret
        self.public_name = None           # rv_domain_get_info (@api generated)
        self.doc = []                     # lines of the comment above the annotation
        self.line = None                  # of the enum value
        self.note_lines = {}              # annotation key -> its line
        self.call = None                  # ApiCall (@api generated)
        self.max_note = None              # @max as written
        self.max = None                   # ListMax (@max)

    @property
    def lower(self):
        return self.name.lower()

    @property
    def c_name(self):
        """The name's part of the C identifiers made for it: domain_get_info,
        admin_connect_open (a program other than remote keeps its key, so
        that both programs' handlers can live in one daemon)."""
        return self.base[len('rv_'):]

    @property
    def server_stub(self):
        return self.stubs in ('both', 'server')

    @property
    def client_stub(self):
        return self.stubs in ('both', 'client')

    @property
    def driver_slot(self):
        """The driver interface has a slot for it."""
        return self.server_stub and self.handler in ('driver', 'daemon-driver')

    @property
    def daemon_handler(self):
        """server/remote_procs.c has a hand-written rvs_handle_NAME."""
        return self.server_stub and self.handler in ('daemon', 'daemon-driver')


class ListMax:
    """@max: the argument field that says how many items the caller takes
    at most, the bound (its constant's name and value) and the result
    array it bounds (None when the bound was named)."""

    def __init__(self, field, bound_name, bound, items):
        self.field = field
        self.bound_name = bound_name
        self.bound = bound
        self.items = items

    @property
    def unsigned(self):
        return self.field.type_name == 'unsigned int'


class Program:
    def __init__(self, xfile, key, number, version, enum):
        self.xfile = xfile
        self.key = key                    # "REMOTE"
        self.number = number
        self.version = version
        self.enum = enum
        self.procedures = []              # sorted by number
        # libvirt's procedures that the enum lacks (TableProc), by number.
        self.unimplemented = []

    @property
    def annotated(self):
        return self.enum.name == DISPATCH_ENUM or self.enum.name in DAEMON_ENUMS

    @property
    def daemon_only(self):
        return self.enum.name in DAEMON_ENUMS


# ------------------------------------------------------------------ libvirt's procedure table

class TableProc:
    def __init__(self, line, number, name, api, module):
        self.line = line
        self.number = number
        self.name = name                  # DOMAIN_GET_INFO
        self.api = api                    # virDomainGetInfo, or None
        self.module = module              # domain, or None

    @property
    def error_domain(self):
        return MODULE_ERROR_DOMAINS[self.module] if self.module else None


def read_procs_table(path):
    """The rows of a procedure table: '#' comment lines, then
    NUMBER<TAB>NAME<TAB>API<TAB>MODULE, '-' for no API and no module,
    numbers increasing."""
    try:
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
    except OSError as e:
        raise GenError(path, None, f'cannot read: {e.strerror}')
    rows = []
    for lineno, text in enumerate(lines, 1):
        if not text or text.startswith('#'):
            continue
        fields = text.split('\t')
        if len(fields) != 4 or not fields[0].isdigit():
            raise GenError(path, lineno, 'expected NUMBER, NAME, API and MODULE separated by tabs')
        number, name, api, module = int(fields[0]), fields[1], fields[2], fields[3]
        if rows and number <= rows[-1].number:
            raise GenError(path, lineno, f'procedure {number} comes after {rows[-1].number}')
        if number > PROC_NUMBER_MAX:
            raise GenError(path, lineno, f'procedure number {number} is over {PROC_NUMBER_MAX}')
        if (api == '-') != (module == '-'):
            raise GenError(path, lineno, 'API and module are both "-" or neither')
        if module != '-' and module not in MODULE_ERROR_DOMAINS:
            raise GenError(path, lineno, f'unknown module {module!r} (expected one of '
                                         f'{", ".join(sorted(MODULE_ERROR_DOMAINS))})')
        rows.append(TableProc(lineno, number, name, None if api == '-' else api,
                              None if module == '-' else module))
    return rows


# ------------------------------------------------------------------ parser

class Parser:
    """Recursive-descent parser for one .x file."""

    def __init__(self, path, text):
        self.path = path
        self.tokens, self.comments_before, self.passthrough = lex(path, text)
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos]

    def fail(self, message):
        raise GenError(self.path, self.peek().line, message)

    def next(self):
        token = self.tokens[self.pos]
        if token.kind != 'eof':
            self.pos += 1
        return token

    def accept(self, text):
        if self.peek().text == text and self.peek().kind != 'eof':
            return self.next()
        return None

    def expect(self, text):
        token = self.peek()
        if token.text != text or token.kind == 'eof':
            found = 'end of file' if token.kind == 'eof' else repr(token.text)
            self.fail(f'expected {text!r}, found {found}')
        return self.next()

    def identifier(self, what):
        token = self.peek()
        if token.kind != 'ident' or token.text in KEYWORDS:
            found = 'end of file' if token.kind == 'eof' else repr(token.text)
            self.fail(f'expected {what}, found {found}')
        return self.next()

    def value(self, what):
        token = self.peek()
        if token.kind == 'num' or (token.kind == 'ident' and token.text not in KEYWORDS):
            return self.next()
        self.fail(f'expected {what} (a number or a constant)')

    def parse(self, xfile):
        while self.peek().kind != 'eof':
            token = self.peek()
            handler = {
                'const': self.parse_const, 'enum': self.parse_enum,
                'struct': self.parse_struct, 'union': self.parse_union,
                'typedef': self.parse_typedef,
            }.get(token.text)
            if handler is None:
                if token.text == 'program':
                    self.fail('program definitions are not supported: '
                              'procedures are the values of an enum rv_*_procedure')
                self.fail(f'expected a definition, found {token.text!r}')
            self.next()
            xfile.definitions.append(handler(token.line))
        for line, text in self.passthrough:
            m = re.match(r'\s*#\s*include\s+"([^"]+)\.h"\s*$', text)
            if m:
                xfile.includes.append((line, m.group(1) + '.x'))

    def parse_const(self, line):
        name = self.identifier('a constant name').text
        self.expect('=')
        value = self.value('the constant value').text
        self.expect(';')
        return Const(name, self.path, line, value)

    def parse_enum(self, line):
        name = self.identifier('an enum name').text
        self.expect('{')
        values = []
        while True:
            comments = self.comments_before[self.pos]
            prev_line = self.tokens[self.pos - 1].line
            token = self.identifier('an enum value name')
            if not self.accept('='):
                self.fail(f'enum value {token.text} needs an explicit "= number"')
            value = self.value('the enum value').text
            values.append(EnumValue(token.text, value, token.line, comments, prev_line))
            if not self.accept(','):
                break
        self.expect('}')
        self.expect(';')
        return Enum(name, self.path, line, values)

    def parse_struct(self, line):
        name = self.identifier('a struct name').text
        self.expect('{')
        fields = []
        while not self.accept('}'):
            decl = self.declaration()
            if decl.kind == 'void':
                self.fail('a struct field cannot be void')
            self.end_declaration(decl)
            fields.append(decl)
        if not fields:
            self.fail(f'struct {name} is empty')
        self.expect(';')
        return Struct(name, self.path, line, fields)

    def parse_union(self, line):
        name = self.identifier('a union name').text
        self.expect('switch')
        self.expect('(')
        discriminant = self.declaration()
        if discriminant.kind != 'plain':
            self.fail('a union discriminant must be a plain int, unsigned int, bool or enum')
        self.expect(')')
        self.expect('{')
        arms, default = [], None
        while not self.accept('}'):
            if self.accept('default'):
                if default is not None:
                    self.fail(f'union {name} has two default arms')
                self.expect(':')
                default = self.declaration()
                self.end_declaration(default)
                continue
            cases = []
            while self.accept('case'):
                cases.append(self.value('a case value').text)
                self.expect(':')
            if not cases:
                self.fail('expected "case" or "default" in a union')
            decl = self.declaration()
            self.end_declaration(decl)
            arms.append((cases, decl))
        self.expect(';')
        return Union(name, self.path, line, discriminant, arms, default)

    def parse_typedef(self, line):
        decl = self.declaration()
        if decl.kind == 'void':
            self.fail('typedef void is not allowed')
        self.expect(';')
        return Typedef(decl)

    def end_declaration(self, decl):
        semicolon = self.expect(';')
        for comment in self.comments_before[self.pos]:
            if comment.line == semicolon.line:
                decl.comment = ' '.join(comment.text.split())
                break

    def type_specifier(self):
        token = self.peek()
        if token.text == 'unsigned':
            self.next()
            for base in ('int', 'hyper', 'char', 'short', 'long'):
                if self.accept(base):
                    return 'unsigned int' if base == 'long' else 'unsigned ' + base
            return 'unsigned int'
        if token.text in ('int', 'hyper', 'char', 'short', 'float', 'double', 'bool'):
            return self.next().text
        if token.text == 'long':
            self.next()
            return 'int'
        if token.text in ('struct', 'enum', 'union'):
            self.next()
            if self.peek().text == '{':
                self.fail(f'inline {token.text} bodies are not supported; name the type')
            return self.identifier(f'a {token.text} name').text
        if token.text == 'quadruple':
            self.fail('quadruple is not supported')
        return self.identifier('a type').text

    def declaration(self):
        start = self.peek()
        if self.accept('void'):
            return Decl(self.path, start.line, 'void')
        if start.text in ('opaque', 'string'):
            self.next()
            name = self.identifier('a field name').text
            if start.text == 'opaque' and self.accept('['):
                size = self.value('the opaque length').text
                self.expect(']')
                return Decl(self.path, start.line, 'fixed', 'opaque', name, size)
            if not self.accept('<'):
                self.fail(f'{start.text} {name} needs a <bound>')
            size = self.bound(name)
            return Decl(self.path, start.line, 'var', start.text, name, size)
        type_name = self.type_specifier()
        if self.accept('*'):
            name = self.identifier('a field name').text
            if self.peek().text in ('[', '<'):
                self.fail(f'{name}: an optional value cannot also be an array')
            return Decl(self.path, start.line, 'optional', type_name, name)
        name = self.identifier('a field name').text
        if self.accept('['):
            size = self.value('the array length').text
            self.expect(']')
            return Decl(self.path, start.line, 'fixed', type_name, name, size)
        if self.accept('<'):
            return Decl(self.path, start.line, 'var', type_name, name, self.bound(name))
        return Decl(self.path, start.line, 'plain', type_name, name)

    def bound(self, name):
        # Every variable-length field must say how long it may get, so both
        # sides can refuse oversized input before allocating.
        if self.peek().text == '>':
            self.fail(f'{name}: variable-length field without a bound')
        size = self.value('the bound').text
        self.expect('>')
        return size


# ------------------------------------------------------------------ spec

def display_path(path):
    """'protocol/rv_remote.x' whatever the build directory looks like."""
    path = os.path.abspath(path)
    return os.path.basename(os.path.dirname(path)) + '/' + os.path.basename(path)


class Spec:
    """Everything read from the .x files, cross-checked."""

    def __init__(self, paths, procs_table=None):
        self.files = []             # top-level files, in command-line order
        self.all_files = []         # plus what they %#include
        self.defs = {}              # name -> Definition
        self.enum_values = {}       # value name -> (Enum, EnumValue)
        self.programs = []
        seen = {}
        for path in paths:
            self.files.append(self.load(path, seen))
        self.check_references()
        self.find_programs()
        self.match_structs()
        self.resolve_list_bounds()
        self.plan_client_api()
        # One table, the remote program's, or {program key: table}.
        tables = procs_table if isinstance(procs_table, dict) else \
            {'remote': procs_table} if procs_table else {}
        for key, path in tables.items():
            program = next((p for p in self.programs if p.key.lower() == key and p.annotated), None)
            if program is None:
                raise GenError(path, None, f'no annotated program {key!r} for this table')
            self.apply_procs_table(path, program)

    @property
    def unimplemented(self):
        """The remote program's procedures that remvirt does not implement."""
        return self.dispatch_program().unimplemented

    def daemon_programs(self):
        return [p for p in self.programs if p.daemon_only]

    def apply_procs_table(self, path, program):
        """Check an annotated enum against libvirt's procedure table and
        keep the procedures remvirt does not implement."""
        rows = read_procs_table(path)
        ours = {proc.number: proc for proc in program.procedures}
        for row in rows:
            proc = ours.pop(row.number, None)
            if proc is None:
                program.unimplemented.append(row)
                continue
            if proc.name != row.name:
                raise GenError(path, row.line, f'procedure {row.number} is {row.name} here but '
                                               f'{proc.enum_value} in the .x')
            proc.api, proc.module = row.api, row.module
        for proc in ours.values():
            raise GenError(path, None, f'{proc.enum_value} = {proc.number} is not in this table')

    def load(self, path, seen):
        key = os.path.realpath(path)
        if key in seen:
            return seen[key]
        try:
            with open(path, encoding='utf-8') as f:
                text = f.read()
        except OSError as e:
            raise GenError(path, None, f'cannot read: {e.strerror}')
        xfile = XFile(path, display_path(path))
        seen[key] = xfile
        Parser(path, text).parse(xfile)
        # Included files first, so their definitions come first in the docs.
        for line, name in xfile.includes:
            inc_path = os.path.join(os.path.dirname(path), name)
            if not os.path.exists(inc_path):
                raise GenError(path, line, f'included {name} not found next to this file')
            self.load(inc_path, seen)
        self.all_files.append(xfile)
        for definition in xfile.definitions:
            self.define(definition)
        return xfile

    def define(self, definition):
        names = [definition.name]
        if isinstance(definition, Enum):
            names += [v.name for v in definition.values]
        for name in names:
            if name in self.defs or name in self.enum_values:
                other = self.defs.get(name) or self.enum_values[name][0]
                raise GenError(definition.path, definition.line,
                               f'{name} already defined at {other.path}:{other.line}')
        self.defs[definition.name] = definition
        if isinstance(definition, Enum):
            for value in definition.values:
                self.enum_values[value.name] = (definition, value)

    # -- values and types

    def value(self, text, path, line, seen=()):
        """The integer a number or constant name stands for."""
        if NUMBER.fullmatch(text):
            return int(text, 0)
        if text in seen:
            raise GenError(path, line, f'{text} is defined in terms of itself')
        if text in self.enum_values:
            enum, value = self.enum_values[text]
            return self.value(value.value, enum.path, value.line, seen + (text,))
        definition = self.defs.get(text)
        if not isinstance(definition, Const):
            raise GenError(path, line, f'unknown constant {text}')
        return self.value(definition.value, definition.path, definition.line, seen + (text,))

    def check_type(self, decl):
        if decl.kind == 'void' or decl.type_name in ('opaque', 'string'):
            pass
        elif decl.type_name not in PRIMITIVES:
            definition = self.defs.get(decl.type_name)
            if definition is None or isinstance(definition, Const):
                raise GenError(decl.path, decl.line, f'unknown type {decl.type_name}')
        if decl.size is not None:
            size = self.value(decl.size, decl.path, decl.line)
            if size < 0 or (size == 0 and decl.kind == 'fixed'):
                raise GenError(decl.path, decl.line, f'{decl.name}: bad size {size}')

    def check_references(self):
        for xfile in self.all_files:
            for d in xfile.definitions:
                if isinstance(d, Const):
                    self.value(d.value, d.path, d.line)
                elif isinstance(d, Enum):
                    for v in d.values:
                        n = self.value(v.value, d.path, v.line)
                        if not -2**31 <= n < 2**31:
                            raise GenError(d.path, v.line, f'{v.name} = {n} does not fit an int')
                elif isinstance(d, Struct):
                    names = set()
                    for field in d.fields:
                        if field.name in names:
                            raise GenError(d.path, field.line, f'{d.name} has two fields {field.name}')
                        names.add(field.name)
                        self.check_type(field)
                elif isinstance(d, Union):
                    self.check_union(d)
                elif isinstance(d, Typedef):
                    self.check_type(d.decl)

    def check_union(self, union):
        disc = union.discriminant
        self.check_type(disc)
        definition = self.defs.get(disc.type_name)
        if disc.type_name not in ('int', 'unsigned int', 'bool') and not isinstance(definition, Enum):
            raise GenError(union.path, disc.line,
                           f'union {union.name}: discriminant must be int, unsigned int, bool or an enum')
        seen = {}
        for cases, decl in union.arms:
            self.check_type(decl)
            for case in cases:
                n = self.value(case, union.path, decl.line)
                if n in seen:
                    raise GenError(union.path, decl.line,
                                   f'union {union.name}: case {case} repeats case {seen[n]}')
                seen[n] = case
        if union.default is not None:
            self.check_type(union.default)

    # -- programs and procedures

    def find_programs(self):
        for xfile in self.all_files:
            for d in xfile.definitions:
                m = re.fullmatch(r'RV_([A-Z0-9]+)_PROGRAM', d.name)
                if not (m and isinstance(d, Const)):
                    continue
                key = m.group(1)
                version = self.defs.get(f'RV_{key}_VERSION')
                enum = self.defs.get(f'rv_{key.lower()}_procedure')
                if not isinstance(version, Const):
                    raise GenError(d.path, d.line, f'{d.name} has no RV_{key}_VERSION constant')
                if not isinstance(enum, Enum):
                    raise GenError(d.path, d.line,
                                   f'{d.name} has no enum rv_{key.lower()}_procedure')
                program = Program(xfile, key, self.value(d.value, d.path, d.line),
                                  self.value(version.value, version.path, version.line), enum)
                self.programs.append(program)
                self.read_procedures(program)
        if not any(p.enum.name == DISPATCH_ENUM for p in self.programs):
            path = self.files[0].path if self.files else '-'
            raise GenError(path, None, f'no program with enum {DISPATCH_ENUM} '
                           f'(and its RV_REMOTE_PROGRAM and RV_REMOTE_VERSION constants)')
        numbers = {}
        for p in self.programs:
            if p.number in numbers:
                raise GenError(p.enum.path, p.enum.line,
                               f'program number {p.number:#x} also used by {numbers[p.number]}')
            numbers[p.number] = p.key

    def read_procedures(self, program):
        enum = program.enum
        annotated = program.annotated
        for v in enum.values:
            m = re.fullmatch(r'(RV_(?:[A-Z0-9]+_)?PROC_)([A-Z0-9_]+)', v.name)
            if not m:
                raise GenError(enum.path, v.line,
                               f'procedure {v.name} must be named RV_PROC_NAME or RV_<PROGRAM>_PROC_NAME')
            number = self.value(v.value, enum.path, v.line)
            if not 0 <= number <= PROC_NUMBER_MAX:
                raise GenError(enum.path, v.line,
                               f'procedure number {number} outside 0..{PROC_NUMBER_MAX}')
            if any(p.number == number for p in program.procedures):
                other = next(p for p in program.procedures if p.number == number)
                raise GenError(enum.path, v.line,
                               f'{v.name} has the same number as {other.enum_value}')
            base = v.name.lower().replace('proc_', '', 1)
            proc = Procedure(program, v.name, number, m.group(2), base)
            proc.line = v.line
            notes = [c for c in v.comments if '@' in c.text]
            for note in notes:
                if note.line == v.prev_line:
                    # A trailing comment on the line before belongs to that line.
                    raise GenError(enum.path, note.line, 'an annotation comment must be on its '
                                   'own line(s), directly above the procedure it describes')
            # Other comments on their own lines above it document it, except
            # section markers (/* ==== storage ==== */) that group the enum.
            for c in v.comments:
                if c.text.strip().startswith(('====', '----')):
                    continue
                if '@' not in c.text and c.line != v.prev_line:
                    proc.doc += comment_lines(c.text)
            if annotated:
                if not notes:
                    raise GenError(enum.path, v.line,
                                   f'{v.name} has no annotation comment '
                                   '(/* @stubs ... @auth ... @readonly ... */) above it')
                if len(notes) > 1:
                    raise GenError(enum.path, notes[1].line,
                                   f'{v.name} has more than one annotation comment')
                self.read_annotations(proc, notes[0], enum.path, v.line)
                if program.daemon_only:
                    self.check_daemon_only(proc, enum.path)
            elif notes:
                raise GenError(enum.path, notes[0].line,
                               f'annotations are only read in enum {DISPATCH_ENUM}' +
                               ''.join(f' and {e}' for e in DAEMON_ENUMS))
            program.procedures.append(proc)
        program.procedures.sort(key=lambda p: p.number)

    @staticmethod
    def read_annotations(proc, comment, path, value_line):
        # Split by hand to know the line of every word; a '*' opening a
        # continuation line is decoration.
        found = {}
        words = _comment_words(comment)
        i = 0
        while i < len(words):
            line, word = words[i]
            if not word.startswith('@'):
                raise GenError(path, line, f'{proc.enum_value}: unexpected {word!r} in the '
                               'annotation comment (expected ' +
                               ', '.join('@' + k for k in ANNOTATIONS) + ')')
            key = word[1:]
            if key not in ANNOTATIONS:
                raise GenError(path, line, f'{proc.enum_value}: unknown annotation {word}')
            if key in found:
                raise GenError(path, line, f'{proc.enum_value}: {word} given twice')
            if i + 1 >= len(words) or words[i + 1][1].startswith('@'):
                raise GenError(path, line, f'{proc.enum_value}: {word} needs a value')
            value = words[i + 1][1]
            if ANNOTATIONS[key] is None:
                if not re.fullmatch(r'rv_[a-z0-9_]+', value):
                    raise GenError(path, words[i + 1][0],
                                   f'{proc.enum_value}: {word} {value!r} is not an rv_* C name')
            elif isinstance(ANNOTATIONS[key], re.Pattern):
                if not ANNOTATIONS[key].fullmatch(value):
                    raise GenError(path, words[i + 1][0],
                                   f'{proc.enum_value}: {word} {value!r} is not FIELD or FIELD:CONST')
            elif value not in ANNOTATIONS[key]:
                raise GenError(path, words[i + 1][0],
                               f'{proc.enum_value}: unknown value {value!r} for {word} '
                               f'(expected {" | ".join(ANNOTATIONS[key])})')
            found[key] = value
            proc.note_lines[key] = line
            i += 2
        missing = [k for k in ANNOTATIONS if k not in found and k not in ANNOTATION_DEFAULTS
                   and k not in OPTIONAL_ANNOTATIONS]
        if missing:
            raise GenError(path, value_line, f'{proc.enum_value}: missing annotation ' +
                           ', '.join('@' + k for k in missing))
        proc.stubs, proc.auth, proc.readonly = found['stubs'], found['auth'], found['readonly']
        proc.handler = found.get('handler', ANNOTATION_DEFAULTS['handler'])
        if 'handler' in found and proc.stubs not in ('both', 'server'):
            raise GenError(path, value_line, f'{proc.enum_value}: @handler needs a server side '
                                             f'(@stubs both or server)')
        if proc.client_stub and 'api' not in found:
            raise GenError(path, value_line, f'{proc.enum_value}: missing annotation @api '
                                             f'(generated | manual | none)')
        proc.client_api = found.get('api', 'none')
        if proc.client_api != 'none' and not proc.client_stub:
            raise GenError(path, proc.note_lines['api'], f'{proc.enum_value}: @api '
                           f'{proc.client_api} needs a client stub (@stubs both or client)')
        for key in ('ret', 'name'):
            if key in found and proc.client_api != 'generated':
                raise GenError(path, proc.note_lines[key],
                               f'{proc.enum_value}: @{key} is only for @api generated')
        proc.ret_as = found.get('ret')
        proc.max_note = found.get('max')
        if proc.client_api == 'generated':
            proc.public_name = found.get('name', 'rv_' + proc.lower)
            if not proc.doc:
                raise GenError(path, value_line, f'{proc.enum_value}: @api generated needs a '
                               f'comment above the annotation: it documents '
                               f'{proc.public_name}() in the public header')

    @staticmethod
    def check_daemon_only(proc, path):
        """A program the daemon serves itself has no client library and no
        driver: only its server side, by hand-written handlers."""
        if proc.stubs not in ('server', 'none'):
            raise GenError(path, proc.note_lines['stubs'], f'{proc.enum_value}: @stubs '
                           f'{proc.stubs}: this program has no client side (server | none)')
        if proc.handler != 'daemon':
            raise GenError(path, proc.note_lines['handler'], f'{proc.enum_value}: @handler '
                           f'{proc.handler}: this program has no driver (daemon only)')

    def match_structs(self):
        wanted = {}
        for program in self.programs:
            for proc in program.procedures:
                for side in ('args', 'ret', 'msg'):
                    name = f'{proc.base}_{side}'
                    wanted[name] = proc
                    definition = self.defs.get(name)
                    if definition is None:
                        continue
                    if not isinstance(definition, Struct):
                        raise GenError(definition.path, definition.line,
                                       f'{name} must be a struct (it is the {side} of {proc.enum_value})')
                    setattr(proc, side, definition)
                if proc.msg and (proc.args or proc.ret or proc.stubs != 'none'):
                    raise GenError(proc.msg.path, proc.msg.line,
                                   f'{proc.enum_value} is a message: it takes no _args or _ret '
                                   f'and needs @stubs none')
        for xfile in self.all_files:
            for d in xfile.definitions:
                if d.what in ('struct', 'union', 'typedef') and \
                        re.fullmatch(r'rv_\w+_(args|ret|msg)', d.name) and d.name not in wanted:
                    raise GenError(d.path, d.line, f'{d.what} {d.name} belongs to no procedure '
                                   f'(expected a procedure named after it)')

    def resolve_list_bounds(self):
        """@max: which argument bounds which result list, and by how much;
        and the shape of need_results, on every annotated procedure."""
        for program in self.programs:
            if not program.annotated:
                continue
            for proc in program.procedures:
                path = program.enum.path
                fields = {f.name: f for f in proc.args.fields} if proc.args else {}
                if proc.max_note:
                    proc.max = self.list_max(proc, fields, path)
                for f in fields.values():
                    if MAX_FIELD.fullmatch(f.name) and f.kind == 'plain' and \
                            (not proc.max or proc.max.field is not f):
                        raise GenError(f.path, f.line, f'{proc.enum_value}: {f.name} bounds a '
                                       f'result list: annotate the procedure @max {f.name}')
                if 'need_results' in fields:
                    arrays = self.item_arrays(proc.ret)
                    rets = [f for f in proc.ret.fields if f.name == 'ret'] if proc.ret else []
                    if len(arrays) != 1 or not rets:
                        raise GenError(path, proc.line, f'{proc.enum_value}: need_results asks for '
                                       'a result of one list and its count, ret')

    def item_arrays(self, struct):
        """A result's variable-length arrays of items (not bytes or strings)."""
        if struct is None:
            return []
        return [f for f in struct.fields if f.kind == 'var' and
                f.type_name not in ('opaque', 'string', 'char', 'unsigned char')]

    def list_max(self, proc, fields, path):
        line = proc.note_lines['max']
        name, const = MAX_ANNOTATION.fullmatch(proc.max_note).groups()
        field = fields.get(name)
        if field is None or field.kind != 'plain' or field.type_name not in ('int', 'unsigned int'):
            raise GenError(path, line, f'{proc.enum_value}: @max {name}: not an int or unsigned '
                           'int field of the arguments')
        if not proc.driver_slot:
            raise GenError(path, line, f'{proc.enum_value}: @max is checked on the way to the '
                           'driver (@handler driver or daemon-driver)')
        if const:
            bound_name, items = const, None
        else:
            arrays = self.item_arrays(proc.ret)
            if len(arrays) != 1:
                raise GenError(path, line, f'{proc.enum_value}: @max {name}: the result has '
                               f'{len(arrays)} lists of items; name the bound: @max {name}:CONST')
            bound_name, items = arrays[0].size, arrays[0].name
        return ListMax(field, bound_name, self.value(bound_name, path, line), items)

    def dispatch_program(self):
        return next(p for p in self.programs if p.enum.name == DISPATCH_ENUM)

    def plan_client_api(self):
        program = self.dispatch_program()
        owners = {}
        for proc in program.procedures:
            if proc.client_api != 'generated':
                continue
            proc.call = ApiCall(self, proc)
            other = owners.get(proc.public_name)
            if other:
                raise GenError(program.enum.path, proc.line, f'{proc.enum_value}: '
                               f'{proc.public_name} is already {other.enum_value}\'s')
            owners[proc.public_name] = proc

    def generated_api(self):
        """The procedures with a generated public function, by its name."""
        procs = [p for p in self.dispatch_program().procedures if p.call]
        return sorted(procs, key=lambda p: p.public_name)


def comment_lines(text):
    """A comment's text as lines, without the '*' that opens continuation
    lines and without blank lines at either end."""
    lines = []
    for line in text.split('\n'):
        line = line.strip()
        if line.startswith('*'):
            line = line[1:].strip()
        lines.append(line)
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


# ------------------------------------------------------------------ the public client API

# Argument fields a generated public function takes as parameters: XDR
# type -> C parameter type.  A domain (first field only) becomes the
# rv_dom the call is made on.
API_SCALARS = {
    'int': 'int',
    'unsigned int': 'unsigned int',
    'hyper': 'long long',
    'unsigned hyper': 'unsigned long long',
}
# Result fields handed over through a pointer without needing @ret.
API_OUT_HYPERS = {'hyper': 'long long', 'unsigned hyper': 'unsigned long long'}


# Wire references that stand for a handle of the public API: XDR type ->
# (C type, parameter name, the rvc_ prefix of its helpers in client/:
# PREFIX_rpc, PREFIX_to_wire, PREFIX_from_wire).  As the first argument
# field the handle is what the call is made on; later it is one more
# parameter; as the one result field, what the function returns.
HANDLES = {
    'rv_nonnull_domain': ('rv_dom', 'dom', 'rvc_dom'),
    'rv_nonnull_network': ('rv_net', 'net', 'rvc_net'),
    'rv_nonnull_storage_pool': ('rv_pool', 'pool', 'rvc_pool'),
    'rv_nonnull_storage_vol': ('rv_vol', 'vol', 'rvc_vol'),
    'rv_nonnull_domain_snapshot': ('rv_snap', 'snap', 'rvc_snap'),
}


class ApiCall:
    """How the generated public function of one procedure looks:
    parameters, argument checks, and what it makes of the result.
    Anything outside these shapes is refused: such a procedure is
    @api manual."""

    def __init__(self, spec, proc):
        self.proc = proc
        self.name = proc.public_name
        self.on = None                      # HANDLES entry of the first parameter, else rv_conn *conn
        self.params = []                    # C parameter declarations after the first
        self.checks = []                    # (condition, message) refused with INVALID_ARG
        self.sets = []                      # statements filling args_
        self.result = 'none'                # none, string, handle, bool, count, out, out-bool
        self.result_field = None
        self.ret_type = 'int'
        path = spec.dispatch_program().enum.path

        def refuse(line, why, file=None):
            raise GenError(file or path, line, f'{proc.enum_value}: @api generated: {why}; '
                                       f'write it by hand (@api manual)')

        flags = None
        for i, field in enumerate(proc.args.fields if proc.args else []):
            if field.kind == 'plain' and field.type_name in HANDLES:
                ctype, pname, prefix = HANDLES[field.type_name]
                if i == 0:
                    self.on = HANDLES[field.type_name]
                else:
                    # Another handle the call names (the volume to clone).
                    pname = field.name
                    self.params.append(f'{ctype} *{pname}')
                    self.checks.append((f'!{pname}', f'no {pname} given'))
                self.sets.append(f'args_.{field.name} = {prefix}_to_wire({pname});')
            elif field.kind == 'plain' and field.type_name == 'rv_nonnull_string':
                self.params.append(f'const char *{field.name}')
                self.checks.append((f'!{field.name}', f'no {field.name} given'))
                self.sets.append(f'args_.{field.name} = (char *){field.name};')
            elif field.kind == 'plain' and field.type_name == 'rv_uuid':
                self.params.append(f'const unsigned char {field.name}[16]')
                self.checks.append((f'!{field.name}', f'no {field.name} given'))
                self.sets.append(f'memcpy(args_.{field.name}, {field.name}, '
                                 f'sizeof(args_.{field.name}));')
            elif field.kind == 'plain' and field.type_name in API_SCALARS:
                param = f'{API_SCALARS[field.type_name]} {field.name}'
                # libvirt's convention: flags come last, after any result pointer.
                if field.name == 'flags':
                    flags = param
                else:
                    self.params.append(param)
                self.sets.append(f'args_.{field.name} = {field.name};')
            else:
                refuse(field.line, f'argument {field.name} has no generated parameter type', field.path)

        fields = proc.ret.fields if proc.ret else []
        ret_line = proc.note_lines.get('ret', proc.line)
        if len(fields) > 1:
            refuse(proc.ret.line, f'{proc.ret.name} has more than one field', proc.ret.path)
        field = fields[0] if fields else None
        scalar = field is not None and field.kind == 'plain' and field.type_name in ('int', 'hyper', 'unsigned hyper')
        if proc.ret_as and not (scalar and field.type_name == 'int'):
            refuse(ret_line, '@ret is only for a result that is one int')
        if field is None:
            pass
        elif field.kind == 'plain' and field.type_name == 'rv_nonnull_string':
            self.result, self.ret_type = 'string', 'char *'
        elif field.kind == 'plain' and field.type_name in HANDLES:
            self.result, self.ret_type = 'handle', HANDLES[field.type_name][0] + ' *'
            self.result_handle = HANDLES[field.type_name]
        elif scalar and field.type_name == 'int':
            if not proc.ret_as:
                refuse(field.line, f'the result {field.name} is an int: say how it is '
                                   f'returned with @ret bool | count | out | out-bool', field.path)
            self.result = proc.ret_as
            if self.result in ('out', 'out-bool'):
                self.params.append(f'int *{field.name}')
        elif scalar:
            self.result = 'out'
            self.params.append(f'{API_OUT_HYPERS[field.type_name]} *{field.name}')
        else:
            refuse(field.line, f'the result {field.name} has no generated return type', field.path)
        if field is not None:
            self.result_field = field.name
        if self.result in ('out', 'out-bool'):
            self.checks.append((f'!{field.name}', 'no result pointer'))
        if flags:
            self.params.append(flags)

    def first_param(self):
        return f'{self.on[0]} *{self.on[1]}' if self.on else 'rv_conn *conn'

    def declaration(self):
        params = ', '.join([self.first_param()] + self.params)
        space = '' if self.ret_type.endswith('*') else ' '
        return f'{self.ret_type}{space}{self.name}({params})'

    def render(self):
        proc = self.proc
        failed = 'NULL' if self.ret_type.endswith('*') else '-1'
        fail_null = self.ret_type.endswith('*')
        out = [self.declaration(), '{']
        handle = f'{self.on[2]}_rpc({self.on[1]}, __func__)' if self.on else \
            'rvc_handle_rpc(conn, __func__)'
        out += [f'    struct rvc_conn *rpc_ = {handle};', '    if (!rpc_)', f'        return {failed};']
        for condition, message in self.checks:
            report = f'rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: {message}", __func__)'
            if fail_null:
                out += [f'    if ({condition}) {{', f'        {report};', '        return NULL;', '    }']
            else:
                out += [f'    if ({condition})', f'        return {report};']
        call = ['rpc_']
        if proc.args:
            out += [f'    {proc.args.name} args_;', '    memset(&args_, 0, sizeof(args_));']
            out += ['    ' + s for s in self.sets]
            call.append('&args_')
        if proc.ret:
            out += [f'    {proc.ret.name} ret_;', '    memset(&ret_, 0, sizeof(ret_));']
            call.append('&ret_')
        call.append('&err_')
        out += ['    rv_err err_ = { 0 };',
                f'    if (rvc_call_{proc.lower}({", ".join(call)}) < 0)',
                f'        return {"rvc_fail_null" if fail_null else "rvc_fail"}(&err_);']
        field = f'ret_.{self.result_field}'
        if self.result == 'none':
            out.append('    return 0;')
        elif self.result == 'string':
            out.append(f'    return {field};     /* the caller frees it */')
        elif self.result == 'handle':
            conn = f'{self.on[1]}->conn' if self.on else 'conn'
            ctype, _, prefix = self.result_handle
            out += [f'    {ctype} *found_ = {prefix}_from_wire({conn}, &{field});',
                    f'    xdr_free((xdrproc_t)xdr_{proc.ret.name}, (char *)&ret_);',
                    '    return found_;']
        elif self.result == 'bool':
            out.append(f'    return {field} != 0;')
        elif self.result == 'count':
            out += ['    /* A negative count would read as our own failure, with no error set. */',
                    f'    if ({field} < 0)',
                    '        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: the server sent the '
                    'count %d",', f'                          __func__, {field});',
                    f'    return {field};']
        elif self.result in ('out', 'out-bool'):
            value = f'{field} != 0' if self.result == 'out-bool' else field
            out += [f'    *{self.result_field} = {value};', '    return 0;']
        out.append('}')
        return '\n'.join(out) + '\n'


# ------------------------------------------------------------------ C output

def generated_banner(comment_start, sources, comment_end=''):
    names = ' and '.join(f.display for f in sources)
    return f'{comment_start} Generated by gen/rvgen.py from {names}; do not edit.{comment_end}\n'


def header_name(xfile):
    return os.path.splitext(os.path.basename(xfile.path))[0] + '.h'


def c_params(proc, first):
    params = [first]
    if proc.args:
        params.append(f'{proc.args.name} *args')
    if proc.ret:
        params.append(f'{proc.ret.name} *ret')
    return params


# tirpc declares xdr_void(void); casting that straight to the variadic
# xdrproc_t trips -Wcast-function-type, going through void (*)(void) does not.
XDR_VOID = '(xdrproc_t)(void (*)(void))xdr_void'


def filter_expr(struct):
    return f'(xdrproc_t)xdr_{struct.name}' if struct else XDR_VOID


def gen_dispatch_h(spec):
    program = spec.dispatch_program()
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append('''\
/* The server's table of remote procedures and the typed handlers it calls.
 * struct rvs_call and what a handler returns are server/dispatch.h's. */
#ifndef RV_SERVER_RV_DISPATCH_GEN_H
#define RV_SERVER_RV_DISPATCH_GEN_H

#include <stddef.h>
#include <rpc/rpc.h>
#include "rv_remote.h"

struct rvs_call;   /* defined by server/dispatch.h */
struct rv_driver_ops;

/* The one way to a driver slot (server/dispatch.c): the connection's
 * driver interface, or NULL with the call's error set when CONNECT_OPEN
 * has not run; and the NO_SUPPORT refusal naming procedure proc's API. */
const struct rv_driver_ops *rvs_call_driver_ops(struct rvs_call *call);
int rvs_call_unsupported(struct rvs_call *call, int proc);
/* The refusal of an @max argument outside 0..max (VIR_ERR_RPC). */
int rvs_call_bad_max(struct rvs_call *call, const char *field, long long value, int max);

/* Hand-written handlers (@handler daemon or daemon-driver). */
''')
    for proc in program.procedures:
        if proc.daemon_handler:
            out.append(f'int rvs_handle_{proc.lower}({", ".join(c_params(proc, "struct rvs_call *call"))});\n')
    out.append('\n/* Generated: the checked call of a driver slot (@handler driver or daemon-driver). */\n')
    for proc in program.procedures:
        if proc.driver_slot:
            out.append(f'int rvs_driver_{proc.lower}({", ".join(c_params(proc, "struct rvs_call *call"))});\n')
    out.append('''
typedef struct rvs_proc {
    const char *name;                 /* "DOMAIN_GET_INFO"; NULL: no such procedure */
    /* NULL: no such procedure, or the server does not implement it
     * (@stubs client|none, or only in libvirt's procedure table). */
    int (*handler)(struct rvs_call *call, void *args, void *ret);
    /* The public libvirt function the procedure stands for, named in the
     * NO_SUPPORT error when there is no handler; NULL: none (a message,
     * an authentication step). */
    const char *api;
    int error_domain;                 /* of that NO_SUPPORT error (virErrorDomain) */
    xdrproc_t args_filter;            /* xdr_void when void */
    size_t args_size;                 /* 0 when void */
    xdrproc_t ret_filter;
    size_t ret_size;
    unsigned char needs_auth;         /* @auth required */
    unsigned char readonly_ok;        /* @readonly allow */
} rvs_proc;

extern const rvs_proc rvs_remote_procs[];   /* indexed by procedure number */
extern const int rvs_remote_nprocs;          /* highest procedure number + 1 */

#endif
''')
    return ''.join(out)


def gen_dispatch_c(spec):
    program = spec.dispatch_program()
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append('#include "server/dispatch.h"\n#include "server/rv_dispatch.gen.h"\n'
               '#include "server/rv_driver_ops.gen.h"\n\n')
    out.append('/* Each driver slot behind the same checks: an open connection, an @max\n'
               ' * argument within its bound (as libvirtd, before NO_SUPPORT), a slot the\n'
               ' * driver filled in. */\n')
    for proc in program.procedures:
        if not proc.driver_slot:
            continue
        params = c_params(proc, 'struct rvs_call *call')
        passed = ['rvs_call_conn(call)'] + (['args'] if proc.args else []) + \
                 (['ret'] if proc.ret else []) + ['&call->err']
        bound = ''
        if proc.max:
            m = proc.max
            field = f'args->{m.field.name}'
            test = f'{field} > {m.bound_name}' if m.unsigned else \
                f'{field} < 0 || {field} > {m.bound_name}'
            bound = (f'    if ({test})\n        return rvs_call_bad_max(call, "{m.field.name}", '
                     f'{field}, {m.bound_name});\n')
        out.append(f'''int rvs_driver_{proc.lower}({", ".join(params)})
{{
    const struct rv_driver_ops *ops = rvs_call_driver_ops(call);
    if (!ops)
        return -1;
{bound}    if (!ops->{proc.lower})
        return rvs_call_unsupported(call, {proc.enum_value});
    return ops->{proc.lower}({", ".join(passed)});
}}

''')
    out += dispatch_table_c(program)
    return ''.join(out)


def dispatch_table_c(program):
    """A program's procedure table rvs_KEY_procs and its adapters."""
    key = program.key.lower()
    out = ['/* Adapters from the table\'s one generic signature to each typed handler. */\n']
    for proc in program.procedures:
        if not proc.server_stub:
            continue
        args = [f'({proc.args.name} *)args'] if proc.args else []
        rets = [f'({proc.ret.name} *)ret'] if proc.ret else []
        target = 'rvs_handle_' if proc.daemon_handler else 'rvs_driver_'
        out.append(f'static int rvs_adapt_{proc.c_name}(struct rvs_call *call, void *args, void *ret)\n{{\n')
        if not proc.args:
            out.append('    (void)args;\n')
        if not proc.ret:
            out.append('    (void)ret;\n')
        out.append(f'    return {target}{proc.c_name}({", ".join(["call"] + args + rets)});\n}}\n\n')
    out.append(f'const rvs_proc rvs_{key}_procs[] = {{\n')
    for proc in program.procedures:
        handler = f'rvs_adapt_{proc.c_name}' if proc.server_stub else 'NULL'
        api_name = proc.api or internal_api(proc.name)
        api = f'"{api_name}"' if api_name else 'NULL'
        domain = MODULE_ERROR_DOMAINS[proc.module] if proc.module else 0
        out.append(f'''\
    [{proc.enum_value}] = {{
        .name = "{proc.name}",
        .handler = {handler},
        .api = {api},
        .error_domain = {domain},
        .args_filter = {filter_expr(proc.args)},
        .args_size = {f"sizeof({proc.args.name})" if proc.args else "0"},
        .ret_filter = {filter_expr(proc.ret)},
        .ret_size = {f"sizeof({proc.ret.name})" if proc.ret else "0"},
        .needs_auth = {1 if proc.auth == "required" else 0},
        .readonly_ok = {1 if proc.readonly == "allow" else 0},
    }},
''')
    if program.unimplemented:
        out.append('    /* libvirt\'s procedures that remvirt does not implement. */\n')
    for row in program.unimplemented:
        api = f'"{row.api}"' if row.api else 'NULL'
        out.append(f'    [{row.number}] = {{ .name = "{row.name}", .api = {api}, '
                   f'.error_domain = {row.error_domain or 0}, .needs_auth = 1 }},\n')
    out.append('};\n\n')
    out.append(f'const int rvs_{key}_nprocs = (int)(sizeof(rvs_{key}_procs) / sizeof(rvs_{key}_procs[0]));\n')
    return out


def gen_daemon_dispatch_h(program):
    key = program.key.lower()
    guard = f'RV_SERVER_RV_{program.key}_DISPATCH_GEN_H'
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append(f'''\
/* The server's table of {key} procedures and the hand-written handlers
 * it calls (the program is served by the daemon itself, no driver). */
#ifndef {guard}
#define {guard}

#include "{header_name(program.xfile)}"
#include "server/rv_dispatch.gen.h"

''')
    for proc in program.procedures:
        if proc.daemon_handler:
            out.append(f'int rvs_handle_{proc.c_name}({", ".join(c_params(proc, "struct rvs_call *call"))});\n')
    out.append(f'''
extern const rvs_proc rvs_{key}_procs[];   /* indexed by procedure number */
extern const int rvs_{key}_nprocs;          /* highest procedure number + 1 */

#endif
''')
    return ''.join(out)


def gen_daemon_dispatch_c(program):
    key = program.key.lower()
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append(f'#include "server/dispatch.h"\n#include "server/rv_{key}_dispatch.gen.h"\n\n')
    out += dispatch_table_c(program)
    return ''.join(out)


def gen_driver_ops_h(spec):
    program = spec.dispatch_program()
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append('''\
/* The driver interface: one slot per procedure annotated @handler driver
 * or daemon-driver, named after it.  A slot takes the call's wire
 * arguments and fills its wire result, which the dispatcher frees with
 * xdr_free whether the slot succeeds or fails; it returns 0, or -1 with
 * err set (libvirt's codes, so the client sees what libvirtd would send).
 * A slot left NULL is refused with VIR_ERR_NO_SUPPORT naming its API. */
#ifndef RV_SERVER_RV_DRIVER_OPS_GEN_H
#define RV_SERVER_RV_DRIVER_OPS_GEN_H

#include "rv_remote.h"
#include "common/error.h"

typedef struct rv_driver_conn rv_driver_conn;

typedef struct rv_driver_ops {
''')
    slots = []
    for proc in program.procedures:
        if not proc.driver_slot:
            continue
        params = ['rv_driver_conn *c']
        if proc.args:
            params.append(f'const {proc.args.name} *args')
        if proc.ret:
            params.append(f'{proc.ret.name} *ret')
        params.append('rv_err *err')
        slots.append((proc.lower, ", ".join(params)))
        out.append(f'    int (*{proc.lower})({slots[-1][1]});\n')
    out.append('} rv_driver_ops;\n\n'
               '/* RV_DRIVER_SLOTS(prefix_) declares one function per slot, named\n'
               ' * prefix_<slot> with the slot\'s type (rv_qemu_domain_get_info, ...): a\n'
               ' * driver whose slot functions are named so writes no prototypes for\n'
               ' * them, and its table says which it serves. */\n'
               '#define RV_DRIVER_SLOTS(prefix) \\\n')
    for i, (lower, params) in enumerate(slots):
        tail = ' \\\n' if i + 1 < len(slots) else '\n'
        out.append(f'    int prefix##{lower}({params});{tail}')
    out.append('\n#endif\n')
    return ''.join(out)


def gen_stubs_h(spec):
    program = spec.dispatch_program()
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append('''\
/* One synchronous call per remote procedure: encode the arguments, send,
 * wait for the reply with the same serial and decode the result into *ret
 * (which the caller frees with xdr_free).  Returns what rvc_conn_call returns. */
#ifndef RV_CLIENT_RV_STUBS_GEN_H
#define RV_CLIENT_RV_STUBS_GEN_H

#include <rpc/rpc.h>
#include "rv_remote.h"
#include "common/error.h"

struct rvc_conn;

''')
    for proc in program.procedures:
        if proc.client_stub:
            params = c_params(proc, 'struct rvc_conn *conn') + ['rv_err *err']
            out.append(f'int rvc_call_{proc.lower}({", ".join(params)});\n')
    out.append('\n#endif\n')
    return ''.join(out)


def gen_stubs_c(spec):
    program = spec.dispatch_program()
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append('#include "client/conn.h"\n#include "client/rv_stubs.gen.h"\n')
    for proc in program.procedures:
        if not proc.client_stub:
            continue
        params = c_params(proc, 'struct rvc_conn *conn') + ['rv_err *err']
        args = 'args' if proc.args else 'NULL'
        ret = 'ret' if proc.ret else 'NULL'
        out.append(f'''
int rvc_call_{proc.lower}({", ".join(params)})
{{
    return rvc_conn_call(conn, {proc.enum_value}, {filter_expr(proc.args)}, {args}, {filter_expr(proc.ret)}, {ret}, err);
}}
''')
    return ''.join(out)


def c_comment(lines, indent=''):
    """lines as one C comment."""
    if len(lines) == 1:
        return f'{indent}/* {lines[0]} */\n'
    body = [f'{indent}/* {lines[0]}'] + [f'{indent} * {l}'.rstrip() for l in lines[1:]]
    return '\n'.join(body) + ' */\n'


def gen_api_h(spec):
    program = spec.dispatch_program()
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append('''\
/* libremvirt's public calls that are one remote procedure each, written
 * from the procedures annotated @api generated; included by remvirt.h,
 * whose rules (errors, who frees what) apply.  A NULL string or UUID
 * argument, or a NULL result pointer, is refused with RV_ERROR_INVALID_ARG. */
#ifndef LIBREMVIRT_REMVIRT_CALLS_GEN_H
#define LIBREMVIRT_REMVIRT_CALLS_GEN_H

#include "remvirt.h"

#ifdef __cplusplus
extern "C" {
#endif
''')
    for proc in spec.generated_api():
        out.append('\n' + c_comment(proc.doc) + proc.call.declaration() + ';\n')
    out.append('''
#ifdef __cplusplus
}
#endif

#endif
''')
    return ''.join(out)


def gen_api_c(spec):
    program = spec.dispatch_program()
    out = [generated_banner('/*', [program.xfile], ' */')]
    out.append('''\
/* The public calls of remvirt-calls.gen.h: check the handle and the
 * arguments, make the call, hand over the answer. */
#include "client/remvirt.h"

#include <string.h>

#include "client/handle.h"
#include "client/last_error.h"
#include "client/rv_stubs.gen.h"
#include "rv_remote.h"
''')
    for proc in spec.generated_api():
        out.append('\n' + proc.call.render())
    return ''.join(out)


def read_manual_symbols(path):
    """The hand-written public functions: one name a line, '#' comments."""
    try:
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
    except OSError as e:
        raise GenError(path, None, f'cannot read: {e.strerror}')
    names = {}
    for lineno, text in enumerate(lines, 1):
        text = text.split('#', 1)[0].strip()
        if not text:
            continue
        if not re.fullmatch(r'rv_[a-z0-9_]+', text):
            raise GenError(path, lineno, f'{text!r} is not an rv_* function name')
        if text in names:
            raise GenError(path, lineno, f'{text} is already on line {names[text]}')
        names[text] = lineno
    return names


def gen_symbols(spec, manual_path):
    """libremvirt's version script: the hand-written functions and the
    generated ones, nothing else."""
    manual = read_manual_symbols(manual_path)
    generated = spec.generated_api()
    for proc in generated:
        if proc.public_name in manual:
            raise GenError(manual_path, manual[proc.public_name],
                           f'{proc.public_name} is generated ({proc.enum_value} is @api generated): '
                           f'take it off this list')
    out = [generated_banner('#', [spec.dispatch_program().xfile]).rstrip('\n') +
           f' and {display_path(manual_path)}\n']
    out.append('# libremvirt exports exactly the functions of remvirt.h and remvirt-calls.gen.h.\n')
    out.append('LIBREMVIRT_0.1 {\n  global:\n')
    out += [f'    {name};\n' for name in manual]
    out += [f'    {proc.public_name};\n' for proc in generated]
    out.append('  local:\n    *;\n};\n')
    return ''.join(out)


def gen_proc_names_c(spec):
    sources = [p.xfile for p in spec.programs]
    out = [generated_banner('/*', sources, ' */')]
    out.append('#include <stddef.h>\n\n#include "common/proc_names.h"\n')
    for xfile in sources:
        out.append(f'#include "{header_name(xfile)}"\n')
    for program in spec.programs:
        out.append(f'\nstatic const char *const {program.key.lower()}_names[] = {{\n')
        for proc in program.procedures:
            out.append(f'    [{proc.enum_value}] = "{proc.name}",\n')
        out.append('};\n')
    out.append('''
static const char *name_at(const char *const *names, size_t count, int proc)
{
    if (proc < 0 || (size_t)proc >= count)
        return NULL;
    return names[proc];
}

const char *rv_proc_name(unsigned int prog, int proc)
{
    switch (prog) {
''')
    for program in spec.programs:
        table = f'{program.key.lower()}_names'
        out.append(f'    case RV_{program.key}_PROGRAM:\n'
                   f'        return name_at({table}, sizeof({table}) / sizeof({table}[0]), proc);\n')
    out.append('    default:\n        return NULL;\n    }\n}\n')
    return ''.join(out)


def gen_python_constants(spec):
    """Every const and enum value of the .x files, under its C name, for
    the Python tests and tools (no magic numbers there either)."""
    sources = spec.all_files
    out = [generated_banner('#', sources)]
    out.append('"""remvirt\'s wire constants: the .x files\' consts and enum values, named\n'
               'as in C (RV_REMOTE_PROGRAM, RV_PROC_DOMAIN_GET_INFO, RV_REPLY, ...)."""\n')
    for xfile in sources:
        out.append(f'\n# {xfile.display}\n')
        for d in xfile.definitions:
            if isinstance(d, Const):
                out.append(f'{d.name} = {spec.value(d.value, d.path, d.line)}\n')
            elif isinstance(d, Enum):
                for v in d.values:
                    out.append(f'{v.name} = {spec.value(v.value, d.path, v.line)}\n')
    program = spec.dispatch_program()
    out.append('\n# @max: procedure number -> (the argument that bounds a result list, its bound)\n')
    out.append('LIST_MAX = {\n')
    for proc in program.procedures:
        if proc.max:
            out.append(f'    {proc.enum_value}: ({proc.max.field.name!r}, {proc.max.bound}),\n')
    out.append('}\n')
    out.append('\n# The procedures whose need_results 0 asks only for the count\n')
    out.append('NEED_RESULTS = [' + ', '.join(p.enum_value for p in program.procedures if p.args and
                                              any(f.name == 'need_results' for f in p.args.fields)) + ']\n')
    if spec.unimplemented:
        out.append("\n# libvirt's procedures that remvirt does not implement: number -> (name, API)\n")
        out.append('UNIMPLEMENTED_PROCS = {\n')
        for row in spec.unimplemented:
            out.append(f'    {row.number}: ({row.name!r}, {row.api!r}),\n')
        out.append('}\n')
    return ''.join(out)


# ------------------------------------------------------------------ docs

class Wire:
    """A type as the wire sees it, typedefs resolved.
    kind: prim, enum, struct, union, string, opaque_fixed, opaque_var,
    array_fixed, array_var, optional, void."""

    def __init__(self, kind, name=None, size=None, elem=None):
        self.kind = kind
        self.name = name
        self.size = size
        self.elem = elem


class DocWriter:
    def __init__(self, spec):
        self.spec = spec

    # -- resolving

    def wire_of_decl(self, decl):
        if decl.kind == 'void':
            return Wire('void')
        size = None if decl.size is None else self.spec.value(decl.size, decl.path, decl.line)
        if decl.type_name == 'string':
            return Wire('string', size=size)
        if decl.type_name == 'opaque':
            return Wire('opaque_fixed' if decl.kind == 'fixed' else 'opaque_var', size=size)
        base = self.wire_of_type(decl.type_name)
        if decl.kind == 'optional':
            return Wire('optional', elem=base)
        if decl.kind == 'fixed':
            return Wire('array_fixed', size=size, elem=base)
        if decl.kind == 'var':
            return Wire('array_var', size=size, elem=base)
        return base

    def wire_of_type(self, name):
        if name in PRIMITIVES:
            return Wire('prim', name)
        definition = self.spec.defs[name]
        if isinstance(definition, Typedef):
            return self.wire_of_decl(definition.decl)
        return Wire(definition.what, name)

    # -- sizes

    def size(self, wire, stack=()):
        """(smallest encoding in bytes, whether every value has that size)"""
        kind = wire.kind
        if kind == 'void':
            return 0, True
        if kind == 'prim':
            return PRIMITIVES[wire.name][1], True
        if kind == 'enum':
            return 4, True
        if kind in ('string', 'opaque_var', 'array_var', 'optional'):
            return 4, False
        if kind == 'opaque_fixed':
            return (wire.size + 3) // 4 * 4, True
        if kind == 'array_fixed':
            least, fixed = self.size(wire.elem, stack)
            return wire.size * least, fixed
        if wire.name in stack:
            return 0, False
        definition = self.spec.defs[wire.name]
        if kind == 'struct':
            total, fixed = 0, True
            for field in definition.fields:
                least, field_fixed = self.size(self.wire_of_decl(field), stack + (wire.name,))
                total += least
                fixed = fixed and field_fixed
            return total, fixed
        arms = [decl for _, decl in definition.arms]
        if definition.default is not None:
            arms.append(definition.default)
        sizes = [self.size(self.wire_of_decl(d), stack + (wire.name,)) for d in arms]
        least = min(s for s, _ in sizes)
        fixed = all(f for _, f in sizes) and len({s for s, _ in sizes}) == 1
        return 4 + least, fixed

    def size_text(self, wire):
        least, fixed = self.size(wire)
        return f'{least} bytes' if fixed else f'variable, at least {least} bytes'

    # -- rendering as indented text

    def describe(self, wire, indent, stack, expand):
        """(one-line description, lines of the body or [])."""
        kind = wire.kind
        if kind == 'void':
            return 'void', []
        if kind == 'prim':
            return PRIMITIVES[wire.name][0], []
        if kind == 'enum':
            return f'int (enum {wire.name})', []
        if kind == 'string':
            return f'string<{wire.size}>', []
        if kind == 'opaque_fixed':
            return f'opaque[{wire.size}]', []
        if kind == 'opaque_var':
            return f'opaque<{wire.size}>', []
        if kind in ('optional', 'array_fixed', 'array_var'):
            head, body = self.describe(wire.elem, indent, stack, expand)
            prefix = {'optional': 'optional ', 'array_fixed': f'array[{wire.size}] of ',
                      'array_var': f'array<{wire.size}> of '}[kind]
            return prefix + head, body
        definition = self.spec.defs[wire.name]
        if kind == 'struct':
            if not expand or wire.name in stack:
                return f'struct {wire.name}', []
            body = []
            for field in definition.fields:
                body += self.field_lines(field, indent + 1, stack + (wire.name,), expand)
            return f'struct {wire.name}', body
        head = self.union_head(definition)
        if not expand or wire.name in stack:
            return head, []
        return head, self.union_arms(definition, indent + 1, stack + (wire.name,), expand)

    def union_head(self, union):
        disc = union.discriminant
        disc_type, _ = self.describe(self.wire_of_decl(disc), 0, (), False)
        return f'union {union.name} switch ({disc.name}: {disc_type})'

    def union_arms(self, union, indent, stack, expand):
        pad = '  ' * indent
        lines = []
        for cases, decl in union.arms:
            for case in cases:
                number = self.spec.value(case, decl.path, decl.line)
                label = case if NUMBER.fullmatch(case) else f'{number} ({case})'
                lines.append(f'{pad}case {label}:')
            lines += self.field_lines(decl, indent + 1, stack, expand)
        if union.default is not None:
            lines.append(f'{pad}default:')
            lines += self.field_lines(union.default, indent + 1, stack, expand)
        else:
            lines.append(f'{pad}(any other value: invalid)')
        return lines

    def field_lines(self, decl, indent, stack, expand):
        pad = '  ' * indent
        head, body = self.describe(self.wire_of_decl(decl), indent, stack, expand)
        first = f'{pad}{decl.name}: {head}' if decl.kind != 'void' else f'{pad}void'
        if body:
            first += ' {'
        if decl.comment:
            first += f'    # {decl.comment}'
        lines = [first]
        if body:
            lines += body + [pad + '}']
        return lines

    def struct_block(self, struct, expand):
        lines = []
        for field in struct.fields:
            lines += self.field_lines(field, 0, (struct.name,), expand)
        return ['```text'] + lines + ['```']

    # -- the document

    def render(self):
        spec = self.spec
        sources = [p.xfile for p in spec.programs]
        values_files = {v.xfile for v in value_enums(spec)}
        included = [f for f in spec.all_files if f not in sources and f not in values_files]
        banner_sources = sources + [f for f in spec.all_files if f in values_files and f not in sources]
        out = [generated_banner('<!--', banner_sources, ' -->').rstrip('\n')]
        out += ['', '# remvirt procedure table', '']
        out.append('The per-procedure part of the wire spec; [wire-protocol.md](wire-protocol.md) '
                   'covers framing, the header, errors and the connection sequence.')
        if included:
            out.append('Shared types come from ' +
                       ', '.join(f'`{f.display}`' for f in included) + '.')
        out += ['', '## How to read the layouts', '',
                'Fields are listed in wire order with typedefs resolved to what is sent. '
                'Every item takes a multiple of 4 bytes, big-endian:', '',
                '- `int`, `unsigned int`, `bool`, enums: 4 bytes. '
                '`int (char)`, `unsigned int (unsigned short)` and the like: declared as a '
                'small C type but sent as a full 4-byte integer.',
                '- `hyper`, `unsigned hyper`, `double`: 8 bytes.',
                '- `string<N>`: 4-byte length (at most N), the bytes, then zero padding to a '
                'multiple of 4. No terminating NUL.',
                '- `opaque[N]`: exactly N bytes plus padding, no length. `opaque<N>`: like a string.',
                '- `array[N] of T`: exactly N elements of T, no count. '
                '`array<N> of T`: 4-byte count (at most N), then the elements.',
                '- `optional T`: 4-byte flag, 0 (absent, nothing follows) or 1 (T follows).',
                '- `struct X { ... }`: the fields one after another, no padding or count.',
                '- `union X switch (d: int) { ... }`: the 4-byte discriminant, then the arm it selects.',
                '- `void`: nothing at all (an empty payload).',
                '', 'A reply with status ERROR carries `rv_error` instead of the result '
                '(see [Types](#types)).', '']
        if values_files:
            out += ['What the numbers in state, reason, event, flags and error fields mean is in '
                    '[Values](#values).', '']
        for program in spec.programs:
            out += self.render_program(program)
        out += self.render_types()
        out += render_values(spec)
        return '\n'.join(out).rstrip('\n') + '\n'

    def render_coverage(self, program):
        """Per family (libvirt's API module), how many of the program's
        procedures in libvirt's table remvirt defines."""
        if not program.unimplemented:
            return []
        ours, total = {}, {}
        for proc in program.procedures:
            module = getattr(proc, 'module', None) or '-'
            ours[module] = ours.get(module, 0) + 1
            total[module] = total.get(module, 0) + 1
        for row in program.unimplemented:
            module = row.module or '-'
            total[module] = total.get(module, 0) + 1
        out = ['Of libvirt 9.0\'s procedures of this program, remvirt defines these, by family '
               '(the API module of libvirt\'s function; "-": events, authentication and '
               'migration steps); the others are answered VIR_ERR_NO_SUPPORT. A driver may '
               'still lack a defined procedure: it then answers the same.', '',
               '| Family | Defined | In libvirt 9.0 |', '|--------|--------:|---------------:|']
        for module in sorted(total, key=lambda m: (m == '-', m)):
            out.append(f'| {module} | {ours.get(module, 0)} | {total[module]} |')
        out.append(f'| all | {sum(ours.values())} | {sum(total.values())} |')
        return out + ['']

    def render_program(self, program):
        annotated = program.annotated
        out = [f'## Program {program.key.lower()}: {program.number:#010x}, version {program.version}', '']
        out.append(f'Defined in `{program.xfile.display}` as `enum {program.enum.name}`.')
        if annotated:
            out.append('"Before auth" says whether the procedure may run before the client has '
                       'authenticated; "Read-only" whether a read-only connection may call it '
                       '(otherwise the server answers VIR_ERR_OPERATION_DENIED).')
        else:
            out.append('No annotations: these are one-way messages handled by the connection '
                       'itself, not calls dispatched through the procedure table '
                       '(see [wire-protocol.md](wire-protocol.md)).')
        out.append('')
        out += self.render_coverage(program)
        if annotated:
            out += ['| Proc | Name | Arguments | Result | Before auth | Read-only |',
                    '|-----:|------|-----------|--------|:-----------:|:---------:|']
        else:
            out += ['| Proc | Name | Arguments | Result |', '|-----:|------|-----------|--------|']
        for proc in program.procedures:
            anchor = f'{proc.number}-{proc.name.lower()}'
            if not annotated or program.daemon_only:
                anchor = f'{program.key.lower()}-{anchor}'
            sides = [f'`{s.name}`' if s else 'void' for _, s in (('Arguments', proc.args), ('Result', proc.ret))]
            if proc.msg:
                sides = [f'message `{proc.msg.name}`', 'none']
            row = f'| {proc.number} | [{proc.name}](#{anchor}) | {sides[0]} | {sides[1]} |'
            if annotated:
                row += f' {"yes" if proc.auth == "none" else "no"} |' \
                       f' {"yes" if proc.readonly == "allow" else "no"} |'
            out.append(row)
        out.append('')
        for proc in program.procedures:
            title = f'{proc.number} {proc.name}'
            if not annotated or program.daemon_only:
                title = f'{program.key.lower()} {title}'
            out += [f'### {title}', '']
            if annotated:
                out += [f'`{proc.enum_value}` = {proc.number}. '
                        f'Before auth: {"yes" if proc.auth == "none" else "no"}. '
                        f'Read-only connection: {"allowed" if proc.readonly == "allow" else "denied"}. '
                        f'Generated stubs: {proc.stubs}.' +
                        (f' Served by: {proc.handler}.' if proc.server_stub else ''), '']
            else:
                out += [f'`{proc.enum_value}` = {proc.number}.', '']
            if proc.msg:
                out += ['Not a call: the server sends this unasked, as a packet of type MESSAGE '
                        '(2) with status OK, and the client sends no reply. '
                        f'Body: `{proc.msg.name}`, {self.size_text(Wire("struct", proc.msg.name))}.', '']
                out += self.struct_block(proc.msg, expand=True) + ['']
                continue
            for label, struct in (('Arguments', proc.args), ('Result', proc.ret)):
                if struct is None:
                    out += [f'{label}: void (empty payload).', '']
                    continue
                out += [f'{label}: `{struct.name}`, '
                        f'{self.size_text(Wire("struct", struct.name))}.', '']
                out += self.struct_block(struct, expand=True) + ['']
            out += self.list_notes(proc)
        return out

    @staticmethod
    def list_notes(proc):
        """What @max and need_results mean for this procedure."""
        out = []
        if proc.max:
            m = proc.max
            bound = f'`{m.bound_name}`' + (f', the bound of `{m.items}`' if m.items else '')
            low = 'above it' if m.unsigned else 'below 0 or above it'
            example = m.bound + 1 if m.unsigned else -1
            out += [f'`{m.field.name}`: at most {m.bound} ({bound}). A value {low} gets an ERROR '
                    f'reply 39/7 (VIR_ERR_RPC), "{m.field.name} {example} is outside 0..{m.bound}", '
                    'before the driver runs (libvirtd: [section 10](wire-protocol.md#10-limits)).', '']
        if proc.args and any(f.name == 'need_results' for f in proc.args.fields):
            items = next(f for f in proc.ret.fields if f.kind == 'var' and f.name != 'ret')
            out += ['`need_results` 0 asks only for the count: the result is then an empty '
                    f'`{items.name}` (count 0) and `ret`, how many there are; any other value '
                    f'asks for the list, and `ret` is its length.', '']
        return out

    def render_types(self):
        spec = self.spec
        proc_structs = {s.name for p in spec.programs for proc in p.procedures
                        for s in (proc.args, proc.ret, proc.msg) if s}
        proc_enums = {p.enum.name for p in spec.programs} | value_enum_names(spec)
        out = ['## Types', '',
               'Named types shared by the procedures above, in the order the .x files define them. '
               'Nested named types are shown by name; each has its own entry.', '']
        consts, typedefs = [], []
        for xfile in spec.all_files:
            for d in xfile.definitions:
                if isinstance(d, Const):
                    consts.append(d)
                elif isinstance(d, Typedef):
                    typedefs.append(d)
                elif isinstance(d, Enum) and d.name not in proc_enums:
                    out += [f'### enum {d.name}', '',
                            f'From `{xfile.display}`. Sent as a 4-byte int; other values are invalid.', '',
                            '| Name | Value |', '|------|------:|']
                    out += [f'| `{v.name}` | {spec.value(v.value, d.path, v.line)} |' for v in d.values]
                    out.append('')
                elif isinstance(d, (Struct, Union)) and d.name not in proc_structs:
                    wire = Wire(d.what, d.name)
                    out += [f'### {d.what} {d.name}', '',
                            f'From `{xfile.display}`. Size: {self.size_text(wire)}.', '']
                    if isinstance(d, Struct):
                        out += self.struct_block(d, expand=False)
                    else:
                        out += ['```text', self.union_head(d) + ' {']
                        out += self.union_arms(d, 1, (d.name,), False) + ['}', '```']
                    out.append('')
        out += ['### Typedefs', '', '| Name | On the wire |', '|------|-------------|']
        for t in typedefs:
            head, _ = self.describe(self.wire_of_decl(t.decl), 0, (), False)
            out.append(f'| `{t.name}` | `{head}` |')
        out += ['', '### Constants', '', '| Name | Value | Defined in |', '|------|------:|------------|']
        for c in consts:
            value = spec.value(c.value, c.path, c.line)
            shown = f'{value:#x}' if c.value.lower().startswith('0x') else str(value)
            xfile = next(f for f in spec.all_files if c in f.definitions)
            out.append(f'| `{c.name}` | {shown} | `{xfile.display}` |')
        out.append('')
        return out


# ------------------------------------------------------------------ values
#
# protocol/rv_values.x holds, as enums, what the numbers in the int fields
# of the procedures mean (domain states, event details, flags, error
# codes).  Such an enum is marked by a comment above it:
#     /* What it is for.
#      * @libvirt virDomainState [@internal RV_DOMAIN_EVENT_ RV_EVENT_] */
# and each value carries a comment "VIR_NAME: meaning" on its line.  From
# them come the docs' Values section, libremvirt's public constants, the
# server's internal names and (with every other enum) the Python ones.

VALUE_ANNOTATIONS = {'libvirt': 1, 'internal': 2}   # annotation -> number of words


class ValueRow:
    def __init__(self, value, number, libvirt, meaning):
        self.value = value          # EnumValue
        self.number = number
        self.libvirt = libvirt      # VIR_DOMAIN_RUNNING
        self.meaning = meaning


class ValueEnum:
    def __init__(self, enum, xfile, libvirt, description, internal, rows):
        self.enum = enum
        self.xfile = xfile
        self.libvirt = libvirt      # virDomainState
        self.description = description
        self.internal = internal    # (public prefix, internal prefix) or None
        self.rows = rows

    @property
    def is_flags(self):
        """Written in hex in the .x: bits to OR together."""
        return any(v.value.value.lower().startswith('0x') for v in self.rows)

    def internal_name(self, row):
        public, internal = self.internal
        return internal + row.value.name[len(public):]


def _comment_words(comment):
    """The words of a comment, without the '*' that decorates continuation lines."""
    words = []
    for offset, text in enumerate(comment.text.split('\n')):
        line_words = text.split()
        if offset and line_words and line_words[0] == '*':
            line_words = line_words[1:]
        words += [(comment.line + offset, w) for w in line_words]
    return words


def _read_value_enum(spec, xfile, enum, comment, comments_by_line):
    path = xfile.path
    words = _comment_words(comment)
    first = next((i for i, (_, w) in enumerate(words) if w.startswith('@')), len(words))
    description = ' '.join(w for _, w in words[:first])
    if not description:
        raise GenError(path, comment.line, f'enum {enum.name}: say what it is for before the annotations')
    found = {}
    i = first
    while i < len(words):
        line, word = words[i]
        key = word[1:]
        if not word.startswith('@') or key not in VALUE_ANNOTATIONS:
            raise GenError(path, line, f'enum {enum.name}: unexpected {word!r} '
                                       '(expected @libvirt TYPE or @internal FROM TO)')
        if key in found:
            raise GenError(path, line, f'enum {enum.name}: {word} given twice')
        count = VALUE_ANNOTATIONS[key]
        args = [w for _, w in words[i + 1:i + 1 + count]]
        if len(args) < count or any(a.startswith('@') for a in args):
            raise GenError(path, line, f'enum {enum.name}: {word} needs {count} word(s)')
        found[key] = args
        i += 1 + count
    if 'libvirt' not in found:
        raise GenError(path, comment.line, f'enum {enum.name}: missing @libvirt')
    internal = tuple(found['internal']) if 'internal' in found else None
    rows = []
    for v in enum.values:
        notes = [c for c in comments_by_line.get(v.line, ())]
        m = re.fullmatch(r'\s*(VIR_[A-Z0-9_]+):\s*(\S.*?)\s*', notes[0].text, re.S) if notes else None
        if not m or '\n' in notes[0].text:
            raise GenError(path, v.line, f'{v.name} needs a one-line comment '
                                         '"VIR_NAME: what it means" after it')
        if internal and not v.name.startswith(internal[0]):
            raise GenError(path, v.line, f'{v.name} does not start with {internal[0]} (@internal)')
        rows.append(ValueRow(v, spec.value(v.value, path, v.line), m.group(1), m.group(2)))
    return ValueEnum(enum, xfile, found['libvirt'][0], description, internal, rows)


def value_enums(spec):
    """The enums of the .x files that describe values (see above), in file order."""
    cached = getattr(spec, '_value_enums', None)
    if cached is not None:
        return cached
    result = []
    for xfile in spec.all_files:
        with open(xfile.path, encoding='utf-8') as f:
            tokens, comments_before, _ = lex(xfile.path, f.read())
        comments_by_line = {}
        for comments in comments_before:
            for c in comments:
                comments_by_line.setdefault(c.line, []).append(c)
        for d in xfile.definitions:
            if not isinstance(d, Enum):
                continue
            i = next(i for i, t in enumerate(tokens)
                     if t.text == 'enum' and t.line == d.line and tokens[i + 1].text == d.name)
            notes = [c for c in comments_before[i] if '@libvirt' in c.text]
            if notes:
                result.append(_read_value_enum(spec, xfile, d, notes[-1], comments_by_line))
    spec._value_enums = result
    return result


def _c_value_enum(venum, names):
    """One anonymous C enum; names(row) gives each value's C name."""
    text = textwrap.wrap(f'{venum.description} libvirt: {venum.libvirt}.', 74)
    out = ['\n/* ' + '\n * '.join(text) + ' */\nenum {\n']
    width = max(len(names(r)) + len(r.value.value) for r in venum.rows) + 5
    for r in venum.rows:
        left = f'{names(r)} = {r.value.value},'
        out.append(f'    {left:<{width}}/* {r.meaning} */\n')
    out.append('};\n')
    return ''.join(out)


def gen_values_public_h(spec):
    venums = value_enums(spec)
    out = [generated_banner('/*', sorted({v.xfile for v in venums}, key=spec.all_files.index), ' */')]
    out.append('''\
/* libremvirt's names for the values on the wire: libvirt's public numbers,
 * named as libvirt names them with VIR_ spelled RV_ (the error codes,
 * domains and levels as RV_ERROR_, RV_ERROR_FROM_ and RV_ERROR_LEVEL_).
 * A newer server may send values not listed.  Part of remvirt.h, which
 * includes it: include that instead (remvirtd's drivers, which share these
 * values but not the library's API, include this header alone). */
#ifndef LIBREMVIRT_REMVIRT_VALUES_GEN_H
#define LIBREMVIRT_REMVIRT_VALUES_GEN_H
''')
    for venum in venums:
        out.append(_c_value_enum(venum, lambda r: r.value.name))
    out.append('\n#endif\n')
    return ''.join(out)


def gen_values_internal_h(spec):
    venums = [v for v in value_enums(spec) if v.internal]
    out = [generated_banner('/*', sorted({v.xfile for v in venums}, key=spec.all_files.index), ' */')]
    out.append('''\
/* The internal names of the wire values the server and the library's
 * internals use (the enums of the .x annotated @internal), generated from
 * the same source as the public ones in client/remvirt-values.gen.h. */
#ifndef RV_COMMON_RV_VALUES_GEN_H
#define RV_COMMON_RV_VALUES_GEN_H
''')
    for venum in venums:
        out.append(_c_value_enum(venum, venum.internal_name))
    out.append('\n#endif\n')
    return ''.join(out)


def value_enum_names(spec):
    return {v.enum.name for v in value_enums(spec)}


def render_values(spec):
    """The docs' Values section."""
    venums = value_enums(spec)
    if not venums:
        return []
    files = sorted({v.xfile for v in venums}, key=spec.all_files.index)
    out = ['## Values', '',
           'What the numbers in int and unsigned int fields mean, where they are states, '
           'reasons, event codes, flags or error codes: libvirt\'s public values (libvirt 9.0), '
           'defined in ' + ', '.join(f'`{f.display}`' for f in files) + '. '
           'Each table gives the value, libvirt\'s name for it and libremvirt\'s '
           '(`remvirt.h`). The encoding does not change: every such field is a 4-byte int. '
           'Flags are bits to OR together; a field may carry values not listed here '
           '(from a newer peer), which a receiver should pass on or reject, not misread.', '']
    for venum in venums:
        out += [f'### {venum.enum.name} ({venum.libvirt})', '', venum.description, '',
                '| Value | libvirt | libremvirt | Meaning |', '|------:|---------|------------|---------|']
        for r in venum.rows:
            shown = f'{r.number:#x}' if venum.is_flags else str(r.number)
            out.append(f'| {shown} | `{r.libvirt}` | `{r.value.name}` | {r.meaning} |')
        out.append('')
    return out


# ------------------------------------------------------------------ main

def write_if_changed(path, content):
    """Write only when different, so that make sees an unchanged mtime."""
    try:
        with open(path, encoding='utf-8') as f:
            if f.read() == content:
                return False
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(content)
    os.replace(tmp, path)
    return True


def c_outputs(spec, manual_symbols=None):
    outputs = {
        'server/rv_dispatch.gen.h': gen_dispatch_h(spec),
        'server/rv_dispatch.gen.c': gen_dispatch_c(spec),
        'server/rv_driver_ops.gen.h': gen_driver_ops_h(spec),
        'client/rv_stubs.gen.h': gen_stubs_h(spec),
        'client/rv_stubs.gen.c': gen_stubs_c(spec),
        'client/remvirt-calls.gen.h': gen_api_h(spec),
        'client/remvirt-calls.gen.c': gen_api_c(spec),
        'common/rv_proc_names.gen.c': gen_proc_names_c(spec),
        'python/rv_protocol.py': gen_python_constants(spec),
        'client/remvirt-values.gen.h': gen_values_public_h(spec),
        'common/rv_values.gen.h': gen_values_internal_h(spec),
    }
    for program in spec.daemon_programs():
        key = program.key.lower()
        outputs[f'server/rv_{key}_dispatch.gen.h'] = gen_daemon_dispatch_h(program)
        outputs[f'server/rv_{key}_dispatch.gen.c'] = gen_daemon_dispatch_c(program)
    if manual_symbols:
        outputs['client/libremvirt.gen.sym'] = gen_symbols(spec, manual_symbols)
    return outputs


def render_docs(spec):
    return DocWriter(spec).render()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description='Generate remvirt dispatch table, client stubs, procedure names and '
                    'docs/procedures.md from annotated .x files.')
    parser.add_argument('--x', action='append', required=True, metavar='FILE',
                        help='a .x file defining a program (repeat for each)')
    parser.add_argument('--outdir', help='build directory for the generated C files')
    parser.add_argument('--docs', help='path of docs/procedures.md')
    parser.add_argument('--procs-table', metavar='[PROGRAM=]FILE', action='append', default=[],
                        help="libvirt's procedure table of a program (protocol/libvirt-remote-procs.tsv; "
                             'admin=protocol/libvirt-admin-procs.tsv); without PROGRAM, remote')
    parser.add_argument('--manual-symbols', metavar='FILE',
                        help="libremvirt's hand-written public functions (client/libremvirt-manual.sym); "
                             'with it, the version script client/libremvirt.gen.sym is written too')
    parser.add_argument('--check', action='store_true',
                        help='write nothing; exit 1 if --docs is out of date')
    args = parser.parse_args(argv)
    if args.check and not args.docs:
        parser.error('--check needs --docs')
    if not args.check and not args.outdir:
        parser.error('--outdir is required unless --check is given')

    try:
        tables = {}
        for given in args.procs_table:
            key, eq, path = given.rpartition('=')
            tables[key if eq else 'remote'] = path
        spec = Spec(args.x, tables)
        docs = render_docs(spec) if args.docs else None
        outputs = {} if args.check else c_outputs(spec, args.manual_symbols)
    except GenError as e:
        print(f'rvgen: {e}', file=sys.stderr)
        return 1

    if args.check:
        try:
            with open(args.docs, encoding='utf-8') as f:
                current = f.read()
        except OSError as e:
            print(f'rvgen: {args.docs}: {e.strerror}', file=sys.stderr)
            return 1
        if current != docs:
            print(f'rvgen: {args.docs} is out of date; rebuild (make gen/.stamp) to regenerate it',
                  file=sys.stderr)
            return 1
        return 0

    for relpath, content in outputs.items():
        write_if_changed(os.path.join(args.outdir, relpath), content)
    if docs is not None:
        write_if_changed(args.docs, docs)
    return 0


if __name__ == '__main__':
    sys.exit(main())
