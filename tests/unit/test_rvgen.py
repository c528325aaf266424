#!/usr/bin/env python3
"""gen/rvgen.py: annotation errors carry file and line, the generated
dispatch table carries the annotated flags of the real rv_remote.x, the
values of rv_values.x reach the public and internal headers, Python and
the docs, and the committed docs/procedures.md matches the .x files."""

import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

SRCDIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RVGEN = os.path.join(SRCDIR, 'gen', 'rvgen.py')
REMOTE_X = os.path.join(SRCDIR, 'protocol', 'rv_remote.x')
KEEPALIVE_X = os.path.join(SRCDIR, 'protocol', 'rv_keepalive.x')
VALUES_X = os.path.join(SRCDIR, 'protocol', 'rv_values.x')
ADMIN_X = os.path.join(SRCDIR, 'protocol', 'rv_admin.x')
# What the build passes (Makefile.am's gen/.stamp rule).
ALL_X = ['--x', REMOTE_X, '--x', KEEPALIVE_X, '--x', ADMIN_X, '--x', VALUES_X]
ADMIN_TABLE = os.path.join(SRCDIR, 'protocol', 'libvirt-admin-procs.tsv')
DOCS = os.path.join(SRCDIR, 'docs', 'procedures.md')
PROCS_TABLE = os.path.join(SRCDIR, 'protocol', 'libvirt-remote-procs.tsv')
ADMIN_PROCS_TABLE = os.path.join(SRCDIR, 'protocol', 'libvirt-admin-procs.tsv')
MANUAL_SYMS = os.path.join(SRCDIR, 'client', 'libremvirt-manual.sym')

sys.dont_write_bytecode = True      # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(RVGEN))
import rvgen  # noqa: E402

# A tiny program; {procs} is spliced in at line 6.
MINI = textwrap.dedent('''\
    const RV_REMOTE_PROGRAM = 0x20008086;
    const RV_REMOTE_VERSION = 1;
    struct rv_thing_get_args {{ int id; }};
    struct rv_thing_get_ret {{ string name<64>; }};
    enum rv_remote_procedure {{
    {procs}
    }};
    ''')
GOOD_PROC = '/* @stubs both @auth none @readonly allow @api none */\nRV_PROC_THING_GET = 1'


def run_quietly(argv):
    """rvgen.main(argv) with its stderr captured: (status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = rvgen.main(argv)
    return status, err.getvalue()


class BadAnnotations(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, 'rv_remote.x')

    def tearDown(self):
        self.tmp.cleanup()

    def parse(self, procs):
        with open(self.path, 'w') as f:
            f.write(MINI.format(procs=procs))
        return rvgen.Spec([self.path])

    def assert_error(self, procs, line, *words):
        with self.assertRaises(rvgen.GenError) as cm:
            self.parse(procs)
        self.assertEqual(cm.exception.path, self.path)
        self.assertEqual(cm.exception.line, line, str(cm.exception))
        for word in words:
            self.assertIn(word, cm.exception.message)

    def test_good_spec_parses(self):
        spec = self.parse(GOOD_PROC)
        (proc,) = spec.dispatch_program().procedures
        self.assertEqual((proc.name, proc.number, proc.stubs, proc.auth, proc.readonly),
                         ('THING_GET', 1, 'both', 'none', 'allow'))
        self.assertEqual((proc.args.name, proc.ret.name), ('rv_thing_get_args', 'rv_thing_get_ret'))

    def test_procedure_without_annotation(self):
        # RV_PROC_THING_PUT sits on line 8 of the file.
        self.assert_error(GOOD_PROC + ',\nRV_PROC_THING_PUT = 2', 8,
                          'RV_PROC_THING_PUT', 'no annotation')

    def test_procedure_missing_one_annotation(self):
        self.assert_error('/* @stubs both @auth none @api none */\nRV_PROC_THING_GET = 1', 7,
                          '@readonly', 'missing')

    def test_client_stub_without_api(self):
        self.assert_error('/* @stubs both @auth none @readonly allow */\nRV_PROC_THING_GET = 1', 7,
                          '@api', 'missing')

    def test_api_without_client_stub(self):
        self.assert_error('/* @stubs server @auth none @readonly allow\n   @api manual */\n'
                          'RV_PROC_THING_GET = 1', 7, '@api manual', 'client stub')

    def test_unknown_annotation_value(self):
        # The bad value is on the comment's second line, line 7.
        self.assert_error('/* @stubs both\n   @auth maybe @readonly allow @api none */\nRV_PROC_THING_GET = 1',
                          7, "'maybe'", '@auth')

    def test_unknown_annotation_key(self):
        self.assert_error('/* @stubs both @auth none @readonly allow @api none @color red */\n'
                          'RV_PROC_THING_GET = 1', 6, '@color')

    def test_annotation_trailing_previous_line(self):
        self.assert_error(GOOD_PROC + ', /* @stubs both @auth none @readonly allow @api none */\n'
                          'RV_PROC_THING_PUT = 2', 7, 'own line')

    def test_struct_without_procedure(self):
        with open(self.path, 'w') as f:
            f.write(MINI.format(procs=GOOD_PROC) + 'struct rv_thing_put_args { int x; };\n')
        with self.assertRaises(rvgen.GenError) as cm:
            rvgen.Spec([self.path])
        self.assertEqual(cm.exception.line, 9)
        self.assertIn('rv_thing_put_args', cm.exception.message)

    def test_unbounded_string(self):
        with open(self.path, 'w') as f:
            f.write(MINI.replace('string name<64>', 'string name<>').format(procs=GOOD_PROC))
        with self.assertRaises(rvgen.GenError) as cm:
            rvgen.Spec([self.path])
        self.assertEqual(cm.exception.line, 4)
        self.assertIn('without a bound', cm.exception.message)

    def parse_list(self, annotation, args='int maxnames; int other;',
                   ret='int names<64>; opaque map<8>;'):
        """A list procedure: its args and ret structs on lines 3 and 4."""
        with open(self.path, 'w') as f:
            f.write(MINI.replace('int id;', args).replace('string name<64>;', ret).format(
                procs=f'/* @stubs both @auth none @readonly allow @handler driver @api none{annotation} */\n'
                      'RV_PROC_THING_GET = 1'))
        return rvgen.Spec([self.path])

    def assert_list_error(self, line, *words, **kw):
        with self.assertRaises(rvgen.GenError) as cm:
            self.parse_list(**kw)
        self.assertEqual(cm.exception.line, line, str(cm.exception))
        for word in words:
            self.assertIn(word, cm.exception.message)

    def test_max_bound_from_the_result_list(self):
        (proc,) = self.parse_list(' @max maxnames').dispatch_program().procedures
        self.assertEqual((proc.max.field.name, proc.max.bound, proc.max.items), ('maxnames', 64, 'names'))

    def test_max_bound_named(self):
        (proc,) = self.parse_list(' @max other:RV_REMOTE_VERSION', args='int other;',
                                  ret='opaque map<8>;').dispatch_program().procedures
        self.assertEqual((proc.max.field.name, proc.max.bound, proc.max.items), ('other', 1, None))

    def test_max_field_without_max(self):
        # maxnames (line 3) bounds a list: it must be stated.
        self.assert_list_error(3, 'maxnames', '@max', annotation='')

    def test_max_of_no_such_field(self):
        self.assert_list_error(6, '@max count', 'not an int', annotation=' @max count')

    def test_max_with_two_lists(self):
        self.assert_list_error(6, 'name the bound', annotation=' @max maxnames',
                               ret='int names<64>; int ids<9>;')

    def test_max_needs_the_driver(self):
        with open(self.path, 'w') as f:
            f.write(MINI.replace('int id;', 'int maxnames;').format(
                procs='/* @stubs both @auth none @readonly allow @api none @max maxnames */\n'
                      'RV_PROC_THING_GET = 1'))
        with self.assertRaises(rvgen.GenError) as cm:
            rvgen.Spec([self.path])
        self.assertIn('@handler driver', cm.exception.message)

    def test_need_results_needs_a_list_and_ret(self):
        self.assert_list_error(7, 'need_results', annotation='', args='int need_results;',
                               ret='int names<64>;')

    def test_command_line_reports_file_and_line(self):
        with open(self.path, 'w') as f:
            f.write(MINI.format(procs=GOOD_PROC + ',\nRV_PROC_THING_PUT = 2'))
        result = subprocess.run([sys.executable, '-B', RVGEN, '--x', self.path,
                                 '--outdir', self.tmp.name],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, '')
        self.assertIn(f'{self.path}:8: ', result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, 'server')))


# The shared types of rv_packet.x, then the procedures' structs; {structs}
# starts at line 6 and {procs} follows the enum's opening line.
API_X = textwrap.dedent('''\
    const RV_REMOTE_PROGRAM = 0x20008086;
    const RV_REMOTE_VERSION = 1;
    typedef string rv_nonnull_string<64>;
    typedef opaque rv_uuid[16];
    struct rv_nonnull_domain {{ rv_nonnull_string name; rv_uuid uuid; int id; }};
    {structs}
    enum rv_remote_procedure {{
    {procs}
    }};
    ''')

# One procedure of each shape the generator knows; each is '(structs, annotations)'.
SHAPES = {
    'THING_STOP': ('struct rv_thing_stop_args { rv_nonnull_domain dom; unsigned int flags; };', ''),
    'THING_GET_NAME': ('struct rv_thing_get_name_ret { rv_nonnull_string name; };', ''),
    'THING_LOOKUP': ('struct rv_thing_lookup_args { rv_nonnull_string name; };\n'
                     'struct rv_thing_lookup_ret { rv_nonnull_domain dom; };', ''),
    'THING_FIND': ('struct rv_thing_find_args { rv_uuid uuid; };\n'
                   'struct rv_thing_find_ret { rv_nonnull_domain dom; };', ''),
    'THING_IS_ON': ('struct rv_thing_is_on_args { rv_nonnull_domain dom; };\n'
                    'struct rv_thing_is_on_ret { int on; };', '@ret bool'),
    'THING_COUNT': ('struct rv_thing_count_ret { int num; };', '@ret count'),
    'THING_GET_LEVEL': ('struct rv_thing_get_level_args { rv_nonnull_domain dom; unsigned int flags; };\n'
                        'struct rv_thing_get_level_ret { int level; };', '@ret out'),
    'THING_GET_AUTO': ('struct rv_thing_get_auto_args { rv_nonnull_domain dom; };\n'
                       'struct rv_thing_get_auto_ret { int auto_on; };', '@ret out-bool'),
    'THING_GET_SIZE': ('struct rv_thing_get_size_args { hyper delta; };\n'
                       'struct rv_thing_get_size_ret { unsigned hyper size; };', ''),
    'THING_REMOVE_FLAGS': ('struct rv_thing_remove_flags_args { rv_nonnull_domain dom; unsigned int flags; };',
                           '@name rv_thing_remove'),
}


def api_x(shapes, api='generated', doc=True):
    structs = '\n'.join(SHAPES[name][0] for name in shapes)
    procs = []
    for number, name in enumerate(shapes, 1):
        if doc:
            procs.append(f'/* Does {name.lower()}. */')
        procs.append(f'/* @stubs both @auth required @readonly allow @api {api} {SHAPES[name][1]} */')
        procs.append(f'RV_PROC_{name} = {number},')
    return API_X.format(structs=structs, procs='\n'.join(procs).rstrip(','))


class GeneratedApi(unittest.TestCase):
    """The public function of each shape, its declaration and its symbol."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        x = os.path.join(cls.tmp.name, 'rv_remote.x')
        cls.manual = os.path.join(cls.tmp.name, 'manual.sym')
        with open(x, 'w') as f:
            f.write(api_x(SHAPES))
        with open(cls.manual, 'w') as f:
            f.write('# by hand\nrv_connect_open\n')
        status, err = run_quietly(['--x', x, '--outdir', cls.tmp.name,
                                   '--manual-symbols', cls.manual])
        assert status == 0, err
        cls.out = {}
        for name in ('client/remvirt-calls.gen.h', 'client/remvirt-calls.gen.c',
                     'client/libremvirt.gen.sym'):
            with open(os.path.join(cls.tmp.name, name)) as f:
                cls.out[name] = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def body(self, name):
        m = re.search(r'\n([^\n]*\b%s\(.*?\n\}\n)' % name, self.out['client/remvirt-calls.gen.c'], re.S)
        self.assertIsNotNone(m, name)
        return m.group(1)

    def test_declarations_with_their_comments(self):
        h = self.out['client/remvirt-calls.gen.h']
        expected = [
            'int rv_thing_stop(rv_dom *dom, unsigned int flags);',
            'char *rv_thing_get_name(rv_conn *conn);',
            'rv_dom *rv_thing_lookup(rv_conn *conn, const char *name);',
            'rv_dom *rv_thing_find(rv_conn *conn, const unsigned char uuid[16]);',
            'int rv_thing_is_on(rv_dom *dom);',
            'int rv_thing_count(rv_conn *conn);',
            # a result pointer comes before the flags, as in libvirt
            'int rv_thing_get_level(rv_dom *dom, int *level, unsigned int flags);',
            'int rv_thing_get_auto(rv_dom *dom, int *auto_on);',
            'int rv_thing_get_size(rv_conn *conn, long long delta, unsigned long long *size);',
            'int rv_thing_remove(rv_dom *dom, unsigned int flags);',
        ]
        for decl in expected:
            with self.subTest(decl=decl):
                self.assertIn(decl, h)
        self.assertIn('/* Does thing_stop. */\nint rv_thing_stop(', h)
        self.assertIn('/* Does thing_remove_flags. */\nint rv_thing_remove(', h)

    def test_void_result_on_a_domain(self):
        body = self.body('rv_thing_stop')
        self.assertIn('rvc_dom_rpc(dom, __func__)', body)
        self.assertIn('args_.dom = rvc_dom_to_wire(dom);', body)
        self.assertIn('args_.flags = flags;', body)
        self.assertIn('rvc_call_thing_stop(rpc_, &args_, &err_) < 0', body)
        self.assertIn('return rvc_fail(&err_);', body)
        self.assertTrue(body.rstrip().endswith('return 0;\n}'))

    def test_string_result(self):
        body = self.body('rv_thing_get_name')
        self.assertIn('rvc_handle_rpc(conn, __func__)', body)
        self.assertIn('return rvc_fail_null(&err_);', body)
        self.assertIn('return ret_.name;', body)

    def test_string_argument_and_domain_result(self):
        body = self.body('rv_thing_lookup')
        self.assertIn('if (!name) {\n        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, '
                      '"%s: no name given", __func__);\n        return NULL;', body)
        self.assertIn('rvc_dom_from_wire(conn, &ret_.dom)', body)
        self.assertIn('xdr_free((xdrproc_t)xdr_rv_thing_lookup_ret, (char *)&ret_);', body)

    def test_uuid_argument(self):
        body = self.body('rv_thing_find')
        self.assertIn('"%s: no uuid given"', body)
        self.assertIn('memcpy(args_.uuid, uuid, sizeof(args_.uuid));', body)

    def test_int_results(self):
        self.assertIn('return ret_.on != 0;', self.body('rv_thing_is_on'))
        count = self.body('rv_thing_count')
        self.assertIn('if (ret_.num < 0)', count)
        self.assertIn('RV_FROM_RPC, RV_ERR_RPC', count)
        self.assertIn('return ret_.num;', count)
        level = self.body('rv_thing_get_level')
        self.assertIn('if (!level)\n        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, '
                      '"%s: no result pointer", __func__);', level)
        self.assertIn('*level = ret_.level;', level)
        self.assertIn('*auto_on = ret_.auto_on != 0;', self.body('rv_thing_get_auto'))
        size = self.body('rv_thing_get_size')
        self.assertIn('args_.delta = delta;', size)
        self.assertIn('*size = ret_.size;', size)

    def test_symbols(self):
        sym = self.out['client/libremvirt.gen.sym']
        names = re.findall(r'^    (rv_\w+);$', sym, re.M)
        self.assertEqual(names[0], 'rv_connect_open')
        self.assertEqual(sorted(names[1:]), sorted(['rv_' + n.lower() for n in SHAPES
                                                    if n != 'THING_REMOVE_FLAGS'] + ['rv_thing_remove']))
        self.assertIn('local:\n    *;', sym)


class BadApiAnnotations(unittest.TestCase):
    """@api generated refuses what it cannot write, with file and line."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, 'rv_remote.x')

    def tearDown(self):
        self.tmp.cleanup()

    def assert_error(self, text, marker, *words):
        """The error is on the line holding marker."""
        with open(self.path, 'w') as f:
            f.write(text)
        line = next(i for i, l in enumerate(text.split('\n'), 1) if marker in l)
        with self.assertRaises(rvgen.GenError) as cm:
            rvgen.Spec([self.path])
        self.assertEqual(cm.exception.path, self.path)
        self.assertEqual(cm.exception.line, line, str(cm.exception))
        for word in words:
            self.assertIn(word, cm.exception.message)

    def test_argument_without_a_rule(self):
        text = api_x(['THING_STOP']).replace('unsigned int flags;', 'opaque blob<16>;')
        self.assert_error(text, 'opaque blob', 'blob', '@api manual')

    def test_int_result_needs_ret(self):
        text = api_x(['THING_IS_ON']).replace('@ret bool', '')
        self.assert_error(text, 'int on;', '@ret', 'on')

    def test_ret_on_a_string_result(self):
        text = api_x(['THING_GET_NAME']).replace('@api generated', '@api generated @ret bool')
        self.assert_error(text, '@ret bool', '@ret', 'one int')

    def test_ret_needs_generated(self):
        text = api_x(['THING_IS_ON'], api='manual')
        self.assert_error(text, '@ret bool', '@ret', '@api generated')

    def test_bad_public_name(self):
        text = api_x(['THING_REMOVE_FLAGS']).replace('@name rv_thing_remove', '@name ThingRemove')
        self.assert_error(text, '@name', 'ThingRemove')

    def test_two_procedures_one_name(self):
        text = api_x(['THING_STOP', 'THING_REMOVE_FLAGS']).replace('rv_thing_remove ', 'rv_thing_stop ')
        self.assert_error(text, 'RV_PROC_THING_REMOVE_FLAGS', 'rv_thing_stop', 'RV_PROC_THING_STOP')

    def test_generated_needs_a_comment(self):
        self.assert_error(api_x(['THING_STOP'], doc=False), 'RV_PROC_THING_STOP', 'comment')

    def test_second_result_field(self):
        text = api_x(['THING_COUNT']).replace('{ int num; }', '{ int num; int more; }')
        self.assert_error(text, 'rv_thing_count_ret', 'more than one field')

    def test_manual_symbol_that_is_generated(self):
        manual = os.path.join(self.tmp.name, 'manual.sym')
        with open(self.path, 'w') as f:
            f.write(api_x(['THING_STOP']))
        with open(manual, 'w') as f:
            f.write('rv_connect_open\n# comment\nrv_thing_stop\n')
        status, err = run_quietly(['--x', self.path, '--outdir', self.tmp.name,
                                   '--manual-symbols', manual])
        self.assertEqual(status, 1)
        self.assertIn(f'{manual}:3: rv_thing_stop is generated', err)


class DaemonProgram(unittest.TestCase):
    """A second annotated program served by the daemon itself (admin):
    its own table and handlers, no client side, no driver."""

    ADMIN = textwrap.dedent('''\
        const RV_ADMIN_PROGRAM = 0x06900690;
        const RV_ADMIN_VERSION = 1;
        struct rv_admin_thing_get_args {{ int id; }};
        enum rv_admin_procedure {{
        {procs}
        }};
        ''')

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.remote = os.path.join(self.tmp.name, 'rv_remote.x')
        self.admin = os.path.join(self.tmp.name, 'rv_admin.x')
        with open(self.remote, 'w') as f:
            f.write(MINI.format(procs=GOOD_PROC))

    def tearDown(self):
        self.tmp.cleanup()

    def spec(self, procs):
        with open(self.admin, 'w') as f:
            f.write(self.ADMIN.format(procs=procs))
        return rvgen.Spec([self.remote, self.admin])

    def assert_error(self, procs, *words):
        with self.assertRaises(rvgen.GenError) as cm:
            self.spec(procs)
        self.assertEqual(cm.exception.path, self.admin)
        self.assertEqual(cm.exception.line, 5, str(cm.exception))
        for word in words:
            self.assertIn(word, cm.exception.message)

    def test_handlers_keep_the_program_in_their_name(self):
        spec = self.spec('/* @stubs server @auth required @readonly allow */\n'
                         'RV_ADMIN_PROC_THING_GET = 1')
        (program,) = spec.daemon_programs()
        h = rvgen.gen_daemon_dispatch_h(program)
        self.assertIn('int rvs_handle_admin_thing_get(struct rvs_call *call, '
                      'rv_admin_thing_get_args *args);', h)
        self.assertIn('extern const rvs_proc rvs_admin_procs[];', h)
        c = rvgen.gen_daemon_dispatch_c(program)
        self.assertIn('[RV_ADMIN_PROC_THING_GET] = {', c)
        # The remote program's table is untouched by it.
        self.assertNotIn('admin', rvgen.gen_dispatch_c(spec))

    def test_no_client_side(self):
        self.assert_error('/* @stubs both @auth required @readonly allow @api none */\n'
                          'RV_ADMIN_PROC_THING_GET = 1', '@stubs both', 'no client side')

    def test_no_driver(self):
        self.assert_error('/* @stubs server @auth required @readonly allow @handler driver */\n'
                          'RV_ADMIN_PROC_THING_GET = 1', '@handler driver', 'no driver')


class RealProtocol(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        status, err = run_quietly(ALL_X + ['--outdir', cls.tmp.name, '--procs-table', PROCS_TABLE,
                                           '--procs-table', 'admin=' + ADMIN_TABLE,
                                           '--manual-symbols', MANUAL_SYMS])
        assert status == 0, err
        cls.out = {}
        for name in ('server/rv_dispatch.gen.c', 'server/rv_dispatch.gen.h',
                     'server/rv_admin_dispatch.gen.c', 'server/rv_admin_dispatch.gen.h',
                     'client/rv_stubs.gen.h', 'common/rv_proc_names.gen.c',
                     'python/rv_protocol.py', 'client/remvirt-values.gen.h',
                     'common/rv_values.gen.h', 'client/remvirt-calls.gen.h',
                     'client/remvirt-calls.gen.c', 'client/libremvirt.gen.sym'):
            with open(os.path.join(cls.tmp.name, name)) as f:
                cls.out[name] = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def entry(self, proc):
        m = re.search(r'\[RV_PROC_%s\] = \{(.*?)\n    \},' % proc,
                      self.out['server/rv_dispatch.gen.c'], re.S)
        self.assertIsNotNone(m, proc)
        return dict(re.findall(r'\.(\w+) = ([^,]+),', m.group(1)))

    def test_list_max_checked_before_the_driver(self):
        # A bound from the .x, checked before the slot is looked at; an
        # unsigned field has no lower end.
        c = self.out['server/rv_dispatch.gen.c']
        m = re.search(r'int rvs_driver_connect_list_domains\(.*?\n}\n', c, re.S)
        body = m.group(0)
        self.assertIn('if (args->maxids < 0 || args->maxids > RV_DOMAIN_LIST_MAX)', body)
        self.assertLess(body.index('rvs_call_bad_max'), body.index('rvs_call_unsupported'))
        self.assertIn('if (args->maxStats > RV_MEMORY_STATS_MAX)', c)
        self.assertIn("RV_PROC_CONNECT_LIST_DOMAINS: ('maxids', 16384)", self.out['python/rv_protocol.py'])

    def test_auth_and_readonly_flags(self):
        expected = {                       # needs_auth, readonly_ok
            'AUTH_LIST': ('0', '1'),
            'CONNECT_SUPPORTS_FEATURE': ('1', '1'),  # only 66-70 run before auth
            'CONNECT_OPEN': ('1', '1'),
            'DOMAIN_GET_INFO': ('1', '1'),
            'DOMAIN_DESTROY': ('1', '0'),
            'DOMAIN_DEFINE_XML': ('1', '0'),
        }
        for proc, (auth, readonly) in expected.items():
            with self.subTest(proc=proc):
                entry = self.entry(proc)
                self.assertEqual(entry['name'], f'"{proc}"')
                self.assertEqual((entry['needs_auth'], entry['readonly_ok']), (auth, readonly))

    def test_void_sides(self):
        entry = self.entry('CONNECT_CLOSE')
        self.assertEqual((entry['args_size'], entry['ret_size']), ('0', '0'))
        self.assertIn('xdr_void', entry['args_filter'])
        self.assertIn('int rvs_handle_connect_close(struct rvs_call *call);',
                      self.out['server/rv_dispatch.gen.h'])
        self.assertIn('int rvc_call_connect_get_type(struct rvc_conn *conn, '
                      'rv_connect_get_type_ret *ret, rv_err *err);',
                      self.out['client/rv_stubs.gen.h'])

    def test_every_file_says_it_is_generated(self):
        for name, text in self.out.items():
            with self.subTest(file=name):
                self.assertRegex(text.splitlines()[0], r'Generated by gen/rvgen\.py from .*do not edit')

    def test_both_programs_named(self):
        names = self.out['common/rv_proc_names.gen.c']
        self.assertIn('[RV_PROC_DOMAIN_GET_INFO] = "DOMAIN_GET_INFO"', names)
        self.assertIn('[RV_KEEPALIVE_PROC_PING] = "PING"', names)

    def test_implemented_procedures_name_their_api(self):
        entry = self.entry('DOMAIN_GET_INFO')
        self.assertEqual((entry['api'], entry['error_domain']), ('"virDomainGetInfo"', '20'))
        self.assertEqual(self.entry('AUTH_LIST')['api'], 'NULL')

    def test_unimplemented_procedures_are_refused_by_name(self):
        table = self.out['server/rv_dispatch.gen.c']
        self.assertTrue('[439] = { .name = "DOMAIN_SET_LAUNCH_SECURITY_STATE", '
                        '.api = "virDomainSetLaunchSecurityState", .error_domain = 20, '
                        '.needs_auth = 1 },' in table)
        self.assertTrue('.api = "virNWFilterBindingCreateXML", .error_domain = 33' in table)
        # A procedure with no API in libvirt's table (the version 1
        # migration steps, internal to the client): still an unknown one.
        self.assertTrue('[61] = { .name = "DOMAIN_MIGRATE_PREPARE", .api = NULL' in table)

    def test_admin_table(self):
        table = self.out['server/rv_admin_dispatch.gen.c']
        m = re.search(r'\[RV_ADMIN_PROC_CLIENT_CLOSE\] = \{(.*?)\n    \},', table, re.S)
        entry = dict(re.findall(r'\.(\w+) = ([^,]+),', m.group(1)))
        self.assertEqual((entry['handler'], entry['api'], entry['error_domain']),
                         ('rvs_adapt_admin_client_close', '"virAdmClientClose"', '62'))
        # The admin program's last procedure is served, not refused.
        m = re.search(r'\[RV_ADMIN_PROC_CONNECT_SET_DAEMON_TIMEOUT\] = \{(.*?)\n    \},', table, re.S)
        entry = dict(re.findall(r'\.(\w+) = ([^,]+),', m.group(1)))
        self.assertEqual((entry['handler'], entry['readonly_ok']),
                         ('rvs_adapt_admin_connect_set_daemon_timeout', '0'))
        self.assertIn('[RV_ADMIN_PROC_CLIENT_CLOSE] = "CLIENT_CLOSE"',
                      self.out['common/rv_proc_names.gen.c'])

    def test_python_constants_match_the_x(self):
        ns = {}
        exec(self.out['python/rv_protocol.py'], ns)
        self.assertEqual(ns['RV_REMOTE_PROGRAM'], 0x20008086)
        self.assertEqual(ns['RV_PROC_DOMAIN_GET_INFO'], 16)
        self.assertEqual(ns['RV_KEEPALIVE_PROC_PONG'], 2)
        self.assertEqual((ns['RV_CALL'], ns['RV_REPLY'], ns['RV_MESSAGE']), (0, 1, 2))
        self.assertEqual(ns['UNIMPLEMENTED_PROCS'][439],
                         ('DOMAIN_SET_LAUNCH_SECURITY_STATE', 'virDomainSetLaunchSecurityState'))
        self.assertNotIn(16, ns['UNIMPLEMENTED_PROCS'])

    def test_public_api(self):
        h = self.out['client/remvirt-calls.gen.h']
        for decl in ('int rv_domain_undefine(rv_dom *dom, unsigned int flags);',
                     'int rv_connect_num_of_domains(rv_conn *conn);',
                     'int rv_domain_get_autostart(rv_dom *dom, int *autostart);',
                     'rv_dom *rv_domain_lookup_by_uuid(rv_conn *conn, const unsigned char uuid[16]);',
                     'int rv_connect_get_version(rv_conn *conn, unsigned long long *hv_ver);'):
            with self.subTest(decl=decl):
                self.assertIn(decl, h)
        # Hand-written ones are not generated.
        for name in ('rv_domain_create(', 'rv_node_get_info(', 'rv_domain_shutdown('):
            self.assertNotIn(name, h)
        # Every declared function is exported, and nothing else is added.
        declared = set(re.findall(r'\b(rv_\w+)\(', h))
        exported = set(re.findall(r'^    (rv_\w+);$', self.out['client/libremvirt.gen.sym'], re.M))
        self.assertLessEqual(declared, exported)
        self.assertIn('rv_connect_open', exported)

    def test_unchanged_output_is_not_rewritten(self):
        path = os.path.join(self.tmp.name, 'server/rv_dispatch.gen.c')
        os.utime(path, (1, 1))
        status, err = run_quietly(ALL_X + ['--outdir', self.tmp.name, '--procs-table', PROCS_TABLE])
        self.assertEqual(status, 0, err)
        self.assertEqual(os.stat(path).st_mtime, 1)


class Values(unittest.TestCase):
    """protocol/rv_values.x: one source for the public constants, the
    internal ones, Python's and the docs' Values section."""

    # The public names remvirt.h spelled by hand before they were generated:
    # each must keep its name and number.
    PUBLIC_BEFORE = {
        'RV_ERROR_OK': 0, 'RV_ERROR_INTERNAL_ERROR': 1, 'RV_ERROR_NO_SUPPORT': 3,
        'RV_ERROR_NO_CONNECT': 5, 'RV_ERROR_INVALID_ARG': 8, 'RV_ERROR_XML_ERROR': 27,
        'RV_ERROR_OPERATION_DENIED': 29, 'RV_ERROR_RPC': 39, 'RV_ERROR_NO_DOMAIN': 42,
        'RV_ERROR_AUTH_FAILED': 45, 'RV_ERROR_OPERATION_INVALID': 55, 'RV_ERROR_SSH': 85,
        'RV_ERROR_FROM_NONE': 0, 'RV_ERROR_FROM_DOM': 6, 'RV_ERROR_FROM_RPC': 7,
        'RV_ERROR_FROM_CONF': 9, 'RV_ERROR_FROM_TEST': 12, 'RV_ERROR_FROM_REMOTE': 13,
        'RV_ERROR_FROM_URI': 45, 'RV_ERROR_FROM_SSH': 50,
        'RV_ERROR_LEVEL_WARNING': 1, 'RV_ERROR_LEVEL_ERROR': 2,
        'RV_CONNECT_LIST_DOMAINS_ACTIVE': 1, 'RV_CONNECT_LIST_DOMAINS_NO_SNAPSHOT': 1 << 13,
        'RV_DOMAIN_START_PAUSED': 1, 'RV_DOMAIN_START_FORCE_BOOT': 8,
        'RV_DOMAIN_UNDEFINE_MANAGED_SAVE': 1, 'RV_DOMAIN_UNDEFINE_NVRAM': 4,
        'RV_DOMAIN_NOSTATE': 0, 'RV_DOMAIN_RUNNING': 1, 'RV_DOMAIN_PAUSED': 3,
        'RV_DOMAIN_SHUTOFF': 5, 'RV_DOMAIN_PMSUSPENDED': 7,
        'RV_DOMAIN_XML_SECURE': 1, 'RV_DOMAIN_XML_MIGRATABLE': 8,
        'RV_DOMAIN_EVENT_ID_LIFECYCLE': 0, 'RV_DOMAIN_EVENT_DEFINED': 0,
        'RV_DOMAIN_EVENT_STOPPED': 5, 'RV_DOMAIN_EVENT_CRASHED': 8,
    }

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        status, err = run_quietly(ALL_X + ['--outdir', cls.tmp.name])
        assert status == 0, err
        cls.out = {}
        for name in ('client/remvirt-values.gen.h', 'common/rv_values.gen.h',
                     'python/rv_protocol.py'):
            with open(os.path.join(cls.tmp.name, name)) as f:
                cls.out[name] = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @staticmethod
    def c_enum_values(text):
        return {name: int(value, 0) for name, value in
                re.findall(r'^    (RV_\w+) = (-?(?:0x[0-9a-f]+|\d+)),', text, re.M)}

    def test_public_header_keeps_the_names(self):
        public = self.c_enum_values(self.out['client/remvirt-values.gen.h'])
        for name, value in self.PUBLIC_BEFORE.items():
            with self.subTest(name=name):
                self.assertEqual(public.get(name), value)
        self.assertEqual(public['RV_DOMAIN_SHUTOFF_DESTROYED'], 2)
        self.assertEqual(public['RV_DOMAIN_EVENT_STOPPED_DESTROYED'], 1)
        self.assertEqual(public['RV_ERROR_MULTIPLE_DOMAINS'], 110)   # libvirt 9.0's last

    def test_internal_header_renames_and_nothing_else(self):
        public = self.c_enum_values(self.out['client/remvirt-values.gen.h'])
        internal = self.c_enum_values(self.out['common/rv_values.gen.h'])
        self.assertEqual(internal['RV_ERR_NO_SUPPORT'], 3)
        self.assertEqual(internal['RV_ERR_LEVEL_ERROR'], 2)
        self.assertEqual(internal['RV_FROM_DOMAIN'], 20)
        self.assertEqual(internal['RV_LIST_DOMAINS_NO_CHECKPOINT'], 1 << 15)
        self.assertEqual(internal['RV_EVENT_STOPPED_DESTROYED'], 1)
        # One namespace per side: no name in both headers.
        self.assertEqual(set(public) & set(internal), set())
        self.assertNotIn('RV_DOMAIN_RUNNING', internal)

    def test_python_gets_the_public_names(self):
        ns = {}
        exec(self.out['python/rv_protocol.py'], ns)
        public = self.c_enum_values(self.out['client/remvirt-values.gen.h'])
        for name, value in public.items():
            with self.subTest(name=name):
                self.assertEqual(ns.get(name), value)

    def test_numbers_are_libvirts(self):
        """Every value against libvirt's own headers, where they are installed."""
        headers = ['/usr/include/libvirt/libvirt-domain.h', '/usr/include/libvirt/virterror.h',
                   '/usr/include/libvirt/libvirt-network.h', '/usr/include/libvirt/libvirt-storage.h',
                   '/usr/include/libvirt/libvirt-nodedev.h', '/usr/include/libvirt/libvirt-host.h',
                   '/usr/include/libvirt/libvirt-domain-snapshot.h',
                   '/usr/include/libvirt/libvirt-domain-checkpoint.h']
        if not all(os.path.exists(h) for h in headers):
            self.skipTest('libvirt-dev headers not installed')
        libvirt = {}
        for h in headers:
            with open(h) as f:
                text = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
            text = re.sub(r'^\s*#.*$', '', text, flags=re.M)
            # Each enum's members in order: one without a value is the
            # one before it plus one, as C has it.
            for body in re.findall(r'\benum\s*\{(.*?)\}', text, flags=re.S):
                following = 0
                for member in body.split(','):
                    m = re.fullmatch(r'\s*(VIR_[A-Z0-9_]+)\s*(?:=\s*(.+?))?\s*', member, flags=re.S)
                    if not m:
                        following = None
                        continue
                    name, expr = m.groups()
                    if expr is None:
                        if following is not None:
                            libvirt[name] = following
                            following += 1
                        continue
                    expr = expr.strip().strip('()').replace('U', '')
                    shift = re.fullmatch(r'1\s*<<\s*(\d+)', expr)
                    following = None
                    if shift:
                        libvirt[name] = 1 << int(shift.group(1))
                    elif re.fullmatch(r'-?\d+', expr):
                        libvirt[name] = int(expr)
                        following = libvirt[name] + 1
        spec = rvgen.Spec([REMOTE_X, KEEPALIVE_X, VALUES_X])
        for venum in rvgen.value_enums(spec):
            for row in venum.rows:
                with self.subTest(name=row.libvirt):
                    self.assertEqual(libvirt.get(row.libvirt), row.number)


class BadValues(unittest.TestCase):
    """Mistakes in a values enum are reported with file and line."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.x = os.path.join(self.tmp.name, 'rv_remote.x')
        with open(self.x, 'w') as f:
            f.write(MINI.format(procs=GOOD_PROC))
        self.values = os.path.join(self.tmp.name, 'rv_values.x')

    def tearDown(self):
        self.tmp.cleanup()

    def value_enums(self, text):
        with open(self.values, 'w') as f:
            f.write(textwrap.dedent(text))
        return rvgen.value_enums(rvgen.Spec([self.x, self.values]))

    def assert_error(self, text, *words):
        with self.assertRaises(rvgen.GenError) as cm:
            self.value_enums(text)
        for w in words:
            self.assertIn(w, str(cm.exception))

    def test_good(self):
        venums = self.value_enums('''\
            /* Colours.
             * @libvirt virColour @internal RV_COLOUR_ RV_COL_ */
            enum rv_colour {
                RV_COLOUR_RED = 0,     /* VIR_COLOUR_RED: warm */
                RV_COLOUR_BLUE = 0x2   /* VIR_COLOUR_BLUE: cold */
            };
            enum rv_plain { RV_PLAIN_A = 1 };
            ''')
        self.assertEqual(len(venums), 1)
        venum = venums[0]
        self.assertEqual((venum.libvirt, venum.description, venum.internal),
                         ('virColour', 'Colours.', ('RV_COLOUR_', 'RV_COL_')))
        self.assertTrue(venum.is_flags)
        self.assertEqual([(r.number, r.libvirt, r.meaning, venum.internal_name(r))
                          for r in venum.rows],
                         [(0, 'VIR_COLOUR_RED', 'warm', 'RV_COL_RED'),
                          (2, 'VIR_COLOUR_BLUE', 'cold', 'RV_COL_BLUE')])

    def test_value_without_meaning(self):
        self.assert_error('''\
            /* Colours.
             * @libvirt virColour */
            enum rv_colour {
                RV_COLOUR_RED = 0,     /* VIR_COLOUR_RED: warm */
                RV_COLOUR_BLUE = 1
            };
            ''', 'rv_values.x:5:', 'RV_COLOUR_BLUE', 'VIR_NAME: what it means')

    def test_internal_prefix_must_match(self):
        self.assert_error('''\
            /* Colours.
             * @libvirt virColour @internal RV_COLOR_ RV_COL_ */
            enum rv_colour {
                RV_COLOUR_RED = 0      /* VIR_COLOUR_RED: warm */
            };
            ''', 'rv_values.x:4:', 'does not start with RV_COLOR_')

    def test_description_and_known_annotations(self):
        self.assert_error('''\
            /* @libvirt virColour */
            enum rv_colour { RV_COLOUR_RED = 0 /* VIR_COLOUR_RED: warm */ };
            ''', 'rv_values.x:1:', 'say what it is for')
        self.assert_error('''\
            /* Colours. @libvirt virColour @public RV_ */
            enum rv_colour { RV_COLOUR_RED = 0 /* VIR_COLOUR_RED: warm */ };
            ''', 'rv_values.x:1:', "unexpected '@public'")


class ProcsTable(unittest.TestCase):
    """The .x and libvirt's table must agree on every number and name."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.x = os.path.join(self.tmp.name, 'rv_remote.x')
        self.table = os.path.join(self.tmp.name, 'procs.tsv')
        with open(self.x, 'w') as f:
            f.write(MINI.format(procs=GOOD_PROC))

    def tearDown(self):
        self.tmp.cleanup()

    def spec(self, rows):
        with open(self.table, 'w') as f:
            f.write('# number name api module\n' + ''.join(r + '\n' for r in rows))
        return rvgen.Spec([self.x], self.table)

    def assert_error(self, rows, *words):
        with self.assertRaises(rvgen.GenError) as cm:
            self.spec(rows)
        for w in words:
            self.assertIn(w, str(cm.exception))

    def test_agreeing_table(self):
        spec = self.spec(['1\tTHING_GET\tvirThingGet\tdomain', '2\tTHING_SET\tvirThingSet\tstorage'])
        self.assertEqual([(r.number, r.api, r.error_domain) for r in spec.unimplemented],
                         [(2, 'virThingSet', 18)])
        self.assertEqual(spec.dispatch_program().procedures[0].api, 'virThingGet')

    def test_name_differs(self):
        self.assert_error(['1\tTHING_PUT\tvirThingPut\tdomain'], 'procs.tsv:2',
                          'THING_PUT', 'RV_PROC_THING_GET')

    def test_procedure_missing_from_table(self):
        self.assert_error(['2\tTHING_SET\tvirThingSet\tdomain'], 'RV_PROC_THING_GET = 1',
                          'not in this table')

    def test_unknown_module(self):
        self.assert_error(['1\tTHING_GET\tvirThingGet\tgadget'], "unknown module 'gadget'")

    def test_numbers_must_increase(self):
        self.assert_error(['1\tTHING_GET\tvirThingGet\tdomain', '1\tTHING_SET\t-\t-'],
                          'procs.tsv:3', 'comes after')


def docs_before(path, marker):
    with open(path) as f:
        return f.read().split(marker, 1)[0]


class Docs(unittest.TestCase):
    def test_committed_docs_are_up_to_date(self):
        status, err = run_quietly(ALL_X + ['--docs', DOCS, '--check', '--procs-table', PROCS_TABLE,
                                           '--procs-table', 'admin=' + ADMIN_PROCS_TABLE])
        self.assertEqual(status, 0, err)

    def test_check_notices_stale_docs(self):
        # A procedure, and a value of the Values section.
        for old, new in (('DOMAIN_GET_INFO', 'DOMAIN_GET_INFORMATION'),
                         ('| 42 | `VIR_ERR_NO_DOMAIN` |', '| 43 | `VIR_ERR_NO_DOMAIN` |')):
            with self.subTest(old=old), tempfile.TemporaryDirectory() as tmp:
                stale = os.path.join(tmp, 'procedures.md')
                with open(DOCS) as src, open(stale, 'w') as dst:
                    text = src.read()
                    self.assertIn(old, text)
                    dst.write(text.replace(old, new, 1))
                status, err = run_quietly(ALL_X + ['--docs', stale, '--check'])
                self.assertEqual(status, 1)
                self.assertIn('out of date', err)

    def test_docs_have_a_table_per_value_enum(self):
        with open(DOCS) as f:
            values = f.read().split('\n## Values\n', 1)[1]
        spec = rvgen.Spec([REMOTE_X, KEEPALIVE_X, VALUES_X])
        venums = rvgen.value_enums(spec)
        self.assertGreater(len(venums), 25)
        for venum in venums:
            with self.subTest(enum=venum.enum.name):
                self.assertIn(f'\n### {venum.enum.name} ({venum.libvirt})\n', values)
        self.assertIn('| 1 | `VIR_DOMAIN_RUNNING` | `RV_DOMAIN_RUNNING` |', values)
        self.assertIn('| 0x2 | `VIR_CONNECT_LIST_DOMAINS_INACTIVE` | '
                      '`RV_CONNECT_LIST_DOMAINS_INACTIVE` |', values)
        self.assertIn('| 20 | `VIR_FROM_DOMAIN` | `RV_ERROR_FROM_DOMAIN` |', values)
        # Not listed a second time among the Types.
        self.assertNotIn('### enum rv_domain_state', docs_before(DOCS, '\n## Values\n'))

    def test_docs_expand_typedefs(self):
        with open(DOCS) as f:
            docs = f.read()
        section = docs.split('### 23 DOMAIN_LOOKUP_BY_NAME', 1)[1].split('\n### ', 1)[0]
        self.assertIn('name: string<4194304>', section)
        self.assertIn('uuid: opaque[16]', section)
        self.assertIn('id: int', section)


if __name__ == '__main__':
    unittest.main()
