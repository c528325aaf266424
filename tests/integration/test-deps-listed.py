#!/usr/bin/env python3
"""Every program and Python module the tests require comes from a Debian
package that tests/check.sh installs, or that such a package needs, on a
bare Debian 12 (its priority-required packages), in check.sh's plain or
--valgrind mode.  What was installed on this machine by hand,
pip-installed or left by an earlier session would let a test pass here
and skip or fail on a newcomer's machine.

The set is what apt would install on an empty system (apt-get -s with an
empty dpkg status: no recommends, as check.sh installs).  A program is
each `requires CMD ...` in tests/ and bench/ (looked up on Debian's PATH,
not ours); a module is each import in their Python files and inline
Python, and each `requires ... -c "import X"`, looked up by the system
python3 (/usr/bin/python3, the one Debian's python3-* packages serve).
Modules of the source tree itself count as there.  Skipped without
apt-get or apt's package lists (apt-get update)."""
import os
import re
import subprocess
import sys

top = os.environ.get('abs_top_srcdir') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
top = os.path.realpath(top)
DEBIAN_PATH = '/usr/sbin:/usr/bin:/sbin:/bin'
SYSTEM_PYTHON3 = '/usr/bin/python3'


def run(*cmd, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, PATH=DEBIAN_PATH, LC_ALL='C'))
    if check and r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd[:4])}... exited {r.returncode}:\n{r.stdout[-3000:]}")
    return r


def skip(why):
    print(f'SKIP: {why}')
    sys.exit(77)


def sources(exts):
    for base in ('tests', 'bench'):
        for dirpath, _, files in os.walk(os.path.join(top, base)):
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.join(dirpath, f)


# ---- what a bare Debian 12 gets from check.sh's lists
for tool in ('apt-get', 'apt-cache', 'dpkg-query'):
    if run('sh', '-c', f'command -v {tool}', check=False).returncode != 0:
        skip(f'no {tool}')
# With --valgrind's too: valgrind serves the modes that run things under
# it (make check-valgrind, RV_HELGRIND=1, bench's --callgrind), whose
# `requires valgrind` a plain run never reaches.
listed = run('bash', os.path.join(top, 'tests/check.sh'), '--valgrind', '--print-deps').stdout.split()
avail = run('apt-cache', 'dumpavail').stdout
if not avail.strip():
    skip("apt knows no packages (run apt-get update)")
required, name = [], None
for line in avail.splitlines():
    if line.startswith('Package: '):
        name = line.split()[1]
    elif line == 'Priority: required' and name:
        required.append(name)
sim = run('apt-get', '-s', '-q', '-o', 'Dir::State::status=/dev/null', 'install',
          '--no-install-recommends', *sorted(set(required)), *listed)
installs = {line.split()[1] for line in sim.stdout.splitlines() if line.startswith('Inst ')}
print(f'ok   a bare Debian 12 with check.sh\'s {len(listed)} packages has {len(installs)} packages '
      f'({len(set(required))} priority-required)')

# ---- what the tests require
commands, modules = {}, {}
req = re.compile(r'^\s*requires\s+(.*)$')
imp = re.compile(r'^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import\b)')
for path in sources(('.sh', '.py')):
    rel = os.path.relpath(path, top)
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = imp.match(line)
            if m:
                for mod in (m.group(1) or m.group(2)).split(','):
                    modules.setdefault(mod.strip().split('.')[0], rel)
            m = req.match(line) if path.endswith('.sh') else None
            if not m:
                continue
            words = m.group(1).split()
            pyimp = re.search(r'-c\s+["\']import\s+(\w+)', m.group(1))
            if pyimp:
                modules.setdefault(pyimp.group(1), rel)
            elif words and re.fullmatch(r'[\w.+-]+', words[0]):
                commands.setdefault(words[0], rel)
local_modules = {os.path.splitext(os.path.basename(p))[0] for p in sources('.py')}
local_modules |= {os.path.splitext(f)[0] for f in os.listdir(os.path.join(top, 'gen')) if f.endswith('.py')}


def candidates(path):
    """PATH and the file it links to, each as dpkg may list it: /bin and
    /usr/bin are one directory on Debian 12, dpkg's list has either."""
    out = []
    for p in (path, os.path.realpath(path)):
        out += [p, p[4:] if p.startswith('/usr/') else '/usr' + p]
    return out


def owners_of(paths):
    """{path: [package...]} for the paths dpkg knows, in one dpkg-query."""
    found = {}
    want = sorted({c for p in paths for c in candidates(p)})
    r = run('dpkg-query', '-S', *want, check=False) if want else None
    for line in (r.stdout.splitlines() if r else []):
        if line.startswith('diversion') or ': ' not in line:
            continue
        pkgs, path = line.split(': ', 1)
        found[path] = [p.strip().split(':')[0] for p in pkgs.split(',')]
    return {p: next((found[c] for c in candidates(p) if c in found), []) for p in paths}


missing = []
need = []                               # (what, path)
for cmd, where in sorted(commands.items()):
    r = run('sh', '-c', f'command -v {cmd}', check=False)
    path = r.stdout.strip()
    if r.returncode != 0:
        missing.append(f'{cmd} (required by {where}) is not installed here, so the test skips')
    elif path.startswith('/'):          # else a shell builtin
        need.append((f'{cmd} (required by {where})', path))
ncommands = len(need)

builddir = os.environ.get('abs_top_builddir', os.path.join(top, 'build'))
for dirpath, _, files in os.walk(builddir):
    local_modules |= {f[:-3] for f in files if f.endswith('.py')}
mods = sorted(m for m in modules if m not in local_modules and m != '__future__')
probe = ('import importlib.util, sys\n'
         'for m in sys.argv[1:]:\n'
         '    s = importlib.util.find_spec(m)\n'
         '    print(m, "missing" if s is None else (s.origin or "built-in"))\n')
r = subprocess.run([SYSTEM_PYTHON3, '-c', probe, *mods], stdout=subprocess.PIPE, text=True, cwd='/',
                   env={'PATH': DEBIAN_PATH, 'HOME': '/nonexistent'}, check=True)
for line in r.stdout.splitlines():
    mod, origin = line.split(' ', 1)
    what = f'Python module {mod} (imported by {modules[mod]})'
    if origin == 'missing':
        # Off sys.path, put there by the script (virtinst's own directory):
        # a package's module directory all the same.
        g = run('dpkg-query', '-S', f'*/{mod}/__init__.py', check=False)
        paths = [l.split(': ', 1)[1] for l in g.stdout.splitlines() if ': ' in l and g.returncode == 0]
        if paths:
            need.append((what, paths[0]))
        else:
            missing.append(f'{what} is in no installed package for {SYSTEM_PYTHON3}')
    elif origin not in ('built-in', 'frozen'):
        need.append((what, origin))

owners = owners_of([p for _, p in need])
for what, path in need:
    pk = owners[path]
    if not pk:
        missing.append(f'{what} is {path}, from no Debian package')
    elif not installs.intersection(pk):
        missing.append(f'{what} comes from {", ".join(pk)}, which check.sh does not install')
print(f'ok   {ncommands} programs and {len(need) - ncommands} Python modules the tests require checked')

if missing:
    print('FAIL: add their packages to tests/check.sh\'s lists:\n  ' + '\n  '.join(missing))
    sys.exit(1)
