# tests/: included from the top Makefile.am.

# server unit tests and the dispatch fuzzer (lead)
check_PROGRAMS += tests/unit/test-config tests/fuzz/fuzz-dispatch
TESTS += tests/unit/test-config tests/fuzz/fuzz-dispatch
tests_unit_test_config_SOURCES = tests/unit/test-config.c tests/unit/check.h
tests_unit_test_config_LDADD = libremvirtd.la
tests_fuzz_fuzz_dispatch_SOURCES = tests/fuzz/fuzz-dispatch.c
tests_fuzz_fuzz_dispatch_LDADD = libremvirtd.la
# the driver interface's choke point: unset slots refused with NO_SUPPORT
check_PROGRAMS += tests/unit/test-driver-slots
TESTS += tests/unit/test-driver-slots
tests_unit_test_driver_slots_SOURCES = tests/unit/test-driver-slots.c tests/unit/check.h
tests_unit_test_driver_slots_LDADD = libremvirtd.la
# deferred replies: answered later with the serial kept, counted in flight
check_PROGRAMS += tests/unit/test-stream-fd
TESTS += tests/unit/test-stream-fd
tests_unit_test_stream_fd_SOURCES = tests/unit/test-stream-fd.c tests/unit/check.h
tests_unit_test_stream_fd_LDADD = libremvirtd.la
check_PROGRAMS += tests/unit/test-stream-fd-sparse
TESTS += tests/unit/test-stream-fd-sparse
tests_unit_test_stream_fd_sparse_SOURCES = tests/unit/test-stream-fd-sparse.c tests/unit/check.h
tests_unit_test_stream_fd_sparse_LDADD = libremvirtd.la

check_PROGRAMS += tests/unit/test-deferred
TESTS += tests/unit/test-deferred
tests_unit_test_deferred_SOURCES = tests/unit/test-deferred.c tests/unit/check.h
tests_unit_test_deferred_LDADD = libremvirtd.la

# ---------------------------------------------------------------- tests: how they run (tests engineer)
# Scripts find the trees through these; $(srcdir) alone is relative.
# RV_VALGRIND is empty except under `make check-valgrind`.
RV_VALGRIND =
# 600: test-deb's dpkg-buildpackage alone took 263-282 s on a loaded 2-core
# machine; a hang still fails well inside CI's time.
RV_TEST_TIMEOUT = 600
AM_TESTS_ENVIRONMENT = \
	abs_top_srcdir='$(abs_top_srcdir)'; export abs_top_srcdir; \
	abs_top_builddir='$(abs_top_builddir)'; export abs_top_builddir; \
	PYTHON3='$(PYTHON3)'; export PYTHON3; \
	RV_VALGRIND='$(RV_VALGRIND)'; export RV_VALGRIND;
# A hung test fails after RV_TEST_TIMEOUT seconds instead of stalling CI;
# bash's TERM trap still runs the cleanups (daemons are stopped).
RV_TIMEOUT_CMD = timeout --kill-after=20 $(RV_TEST_TIMEOUT)
TEST_EXTENSIONS = .sh .py
SH_LOG_COMPILER = $(RV_TIMEOUT_CMD) bash
PY_LOG_COMPILER = $(RV_TIMEOUT_CMD) $(PYTHON3)
# C test programs: under check-valgrind, valgrind runs them.
LOG_COMPILER = $(RV_TIMEOUT_CMD) $(RV_VALGRIND)

# The C test programs and remvirtd (started by tests/functions.sh) under
# valgrind; any error or definite/indirect leak fails the test, except
# what cyrus-sasl's DIGEST-MD5 plugin leaks inside itself (see the file).
RV_VALGRIND_CMD = $(LIBTOOL) --mode=execute $(VALGRIND) --quiet --error-exitcode=119 \
	--leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --num-callers=30 \
	--suppressions=$(abs_top_srcdir)/tests/cyrus-sasl.supp
check-valgrind:
	@test -n "$(VALGRIND)" || { echo "valgrind not found: install the Debian package valgrind" >&2; exit 1; }
	$(MAKE) $(AM_MAKEFLAGS) check RV_VALGRIND='$(RV_VALGRIND_CMD)' RV_TEST_TIMEOUT=1200
.PHONY: check-valgrind

# What the repository top holds for users and CI (tests engineer owns them).
EXTRA_DIST += README.md quickstart.sh .ci/run tests/check.sh

# ---------------------------------------------------------------- tests/unit: common/ and transport/ (tests engineer)
# XDR byte-exact against packets captured from libvirtd (tests/data), the
# framing limits, log specs, buffers and UUIDs.
RV_COMMON_UNIT_TESTS = tests/unit/test-xdr-vectors tests/unit/test-frame \
	tests/unit/test-log tests/unit/test-util tests/unit/test-stream-hole
check_PROGRAMS += $(RV_COMMON_UNIT_TESTS)
TESTS += $(RV_COMMON_UNIT_TESTS)
tests_unit_test_xdr_vectors_SOURCES = tests/unit/test-xdr-vectors.c tests/unit/check.h
tests_unit_test_xdr_vectors_LDADD = libremvirt_common.la
tests_unit_test_frame_SOURCES = tests/unit/test-frame.c tests/unit/check.h
tests_unit_test_frame_LDADD = libremvirt_common.la
tests_unit_test_log_SOURCES = tests/unit/test-log.c tests/unit/check.h
tests_unit_test_log_LDADD = libremvirt_common.la
tests_unit_test_util_SOURCES = tests/unit/test-util.c tests/unit/check.h
tests_unit_test_util_LDADD = libremvirt_common.la
tests_unit_test_stream_hole_SOURCES = tests/unit/test-stream-hole.c tests/unit/check.h
tests_unit_test_stream_hole_LDADD = libremvirt_common.la
# The vectors and the tools that captured them (see the file's header).
EXTRA_DIST += tests/data/libvirt-vectors.txt tests/tools/wire-relay.py tests/tools/make-vectors.py

# ---------------------------------------------------------------- tests/integration, tests/interop: against remvirtd and libvirtd (tests engineer)
# Each script starts its own daemons (tests/functions.sh) in its own temp
# dir, so they run in parallel.
RV_DAEMON_TESTS = \
	tests/integration/test-bad-length.sh \
	tests/integration/test-stream-wire.sh \
	tests/integration/test-truncated.sh \
	tests/integration/test-unknown-call.sh \
	tests/integration/test-garbage.sh \
	tests/integration/test-many-clients.sh \
	tests/integration/test-client-memory.sh \
	tests/integration/test-memory-budget.sh \
	tests/integration/test-readonly.sh \
	tests/integration/test-readonly-procs.sh \
	tests/integration/test-storage-xml-limits.sh \
	tests/integration/test-snapshot-xml-limits.sh \
	tests/integration/test-max-clients.sh \
	tests/integration/test-max-requests.sh \
	tests/integration/test-fd-limit.sh \
	tests/integration/test-reply-limits.sh \
	tests/integration/test-bench-smoke.sh \
	tests/integration/test-client-threads.sh \
	tests/integration/test-loop-batches.sh \
	tests/integration/test-client-async.sh \
	tests/integration/test-client-concurrency.sh \
	tests/integration/test-events-fanout.sh \
	tests/integration/test-events-output-cap.sh \
	tests/integration/test-keepalive-client.sh \
	tests/integration/test-keepalive-daemon.sh \
	tests/integration/test-hostile-server.sh \
	tests/integration/test-client-reader-race.sh \
	tests/integration/test-fd-passing.sh \
	tests/integration/test-tcp.sh \
	tests/integration/test-tls.sh \
	tests/integration/test-preauth.sh \
	tests/integration/test-output-cap.sh \
	tests/integration/test-sasl.sh \
	tests/integration/test-sasl-injection.sh \
	tests/integration/test-ssh.sh \
	tests/integration/test-private-files.sh \
	tests/integration/test-log-injection.sh \
	tests/integration/test-ssh-terminal.sh \
	tests/integration/test-admin-socket.sh \
	tests/integration/test-log-sighup.sh \
	tests/interop/test-virt-admin.sh \
	tests/interop/test-virt-admin-libvirtd.sh \
	tests/interop/test-virt-admin-tls.sh \
	tests/interop/test-rvadm.sh \
	tests/interop/test-daemon-timeout.sh \
	tests/interop/test-virsh.sh \
	tests/interop/test-virsh-networks.sh \
	tests/interop/test-virsh-storage.sh \
	tests/interop/test-virsh-vol-stream.sh \
	tests/interop/test-stream-abort.sh \
	tests/interop/test-rvsh-vol-stream.sh \
	tests/interop/test-sparse-streams.sh \
	tests/interop/test-qemu-console.sh \
	tests/interop/test-qemu-graphics-fd.sh \
	tests/interop/test-qemu-channel.sh \
	tests/interop/test-qemu-aliases.sh \
	tests/interop/test-qemu-hotplug.sh \
	tests/interop/test-qemu-hotplug-q35.sh \
	tests/interop/test-virt-manager-hotplug.sh \
	tests/interop/test-nova.sh \
	tests/interop/test-nova-hotplug.sh \
	tests/interop/test-cockpit-hotplug.sh \
	tests/interop/test-qemu-blockjobs.sh \
	tests/interop/test-qemu-backup.sh \
	tests/interop/test-qemu-backup-tls.sh \
	tests/interop/test-qemu-virtnbdbackup.sh \
	tests/interop/test-qemu-restart.sh \
	tests/interop/test-qemu-hotplug-nic.sh \
	tests/interop/test-qemu-domain-events.sh \
	tests/interop/test-qemu-guest-events.sh \
	tests/interop/test-virsh-nodedev.sh \
	tests/interop/test-qemu-info.sh \
	tests/interop/test-qemu-iothreads.sh \
	tests/interop/test-qemu-ifaddr-agent.sh \
	tests/interop/test-qemu-watchdog.sh \
	tests/interop/test-qemu-rename.sh \
	tests/interop/test-qemu-setters.sh \
	tests/interop/test-qemu-misc-calls.sh \
	tests/interop/test-qemu-network-flags.sh \
	tests/interop/test-virsh-snapshots.sh \
	tests/interop/test-virsh-stats.sh \
	tests/interop/test-rvsh-domain-parity.sh \
	tests/interop/test-virsh-secrets-nwfilters.sh \
	tests/interop/test-python.sh \
	tests/interop/test-test-transcripts.sh \
	tests/interop/test-no-support.sh \
	tests/interop/test-spec-facts.sh \
	tests/interop/test-events-interop.sh \
	tests/interop/test-rvsh-libvirtd.sh \
	tests/interop/test-rvsh-libvirtd-tls.sh \
	tests/interop/test-rvsh-libvirtd-sasl.sh \
	tests/interop/test-rvsh-family-parity.sh \
	tests/interop/test-rvsh-define-parity.sh \
	tests/interop/test-qemu-lifecycle.sh \
	tests/interop/test-qemu-autodestroy.sh \
	tests/interop/test-qemu-libguestfs.sh \
	tests/interop/test-qemu-errors.sh \
	tests/interop/test-qemu-agent.sh \
	tests/interop/test-qemu-define-durable.sh \
	tests/interop/test-qemu-reattach.sh \
	tests/interop/test-qemu-reattach-names.sh \
	tests/interop/test-qemu-monitor-wait.sh \
	tests/interop/test-qemu-config-dir.sh \
	tests/interop/test-rvsh-open-timeout.sh \
	tests/interop/test-qemu-concurrent.sh \
	tests/interop/test-qemu-events.sh \
	tests/interop/test-java-client.sh \
	tests/interop/test-qemu-guest.sh \
	tests/interop/test-qemu-stats.sh \
	tests/interop/test-qemu-virt-install.sh \
	tests/interop/test-qemu-storage.sh \
	tests/interop/test-qemu-storage-libvirtd.sh \
	tests/interop/test-qemu-hostile-paths.sh \
	tests/interop/test-bad-xml.sh \
	tests/interop/test-qemu-big-pool.sh \
	tests/interop/test-qemu-nodedev.sh \
	tests/interop/test-qemu-secrets-nwfilters.sh \
	tests/interop/test-qemu-secrets-define.sh \
	tests/interop/test-qemu-network.sh \
	tests/interop/test-qemu-nat-network.sh \
	tests/interop/test-qemu-network-update.sh \
	tests/interop/test-qemu-network-dnsmasq.sh \
	tests/interop/test-qemu-snapshots.sh \
	tests/interop/test-qemu-checkpoints.sh \
	tests/interop/test-qemu-vs-libvirtd.sh \
	tests/interop/test-qemu-calls.sh \
	tests/interop/test-qemu-save.sh \
	tests/interop/test-qemu-jobs.sh \
	tests/interop/test-qemu-migrate-tune.sh \
	tests/interop/test-qemu-migrate-caps.sh \
	tests/interop/test-qemu-migrate-libvirtd.sh \
	tests/interop/test-qemu-migrate.sh \
	tests/interop/test-qemu-migrate-p2p.sh \
	tests/interop/test-qemu-migrate-ioerror.sh \
	tests/interop/test-qemu-migrate-p2p-transports.sh \
	tests/interop/test-qemu-migrate-tunnel.sh \
	tests/interop/test-qemu-migrate-v3.sh \
	tests/interop/test-qemu-migrate-storage.sh \
	tests/interop/test-qemu-migrate-crash.sh \
	tests/interop/test-qemu-migrate-postcopy.sh \
	tests/interop/test-qemu-migrate-postcopy-p2p.sh \
	tests/interop/test-qemu-save-crash.sh \
	tests/interop/test-qemu-save-define.sh \
	tests/interop/test-qemu-tune.sh \
	tests/interop/test-qemu-domcaps.sh \
	tests/interop/test-qemu-host.sh \
	tests/interop/test-qemu-cpu-xml.sh \
	tests/interop/test-qemu-reboot-event.sh \
	tests/interop/test-qemu-spawner.sh \
	tests/interop/test-qemu-undefine-durable.sh \
	tests/interop/test-qemu-crash-points.sh \
	tests/interop/test-qemu-full-disk.sh \
	tests/interop/test-qemu-restore-kill.sh \
	tests/interop/test-qemu-vcpu-unplug.sh \
	tests/interop/test-virt-manager.sh \
	tests/interop/test-virt-manager-qemu.sh \
	tests/interop/test-nodedev-events.sh
TESTS += $(RV_DAEMON_TESTS)
EXTRA_DIST += $(RV_DAEMON_TESTS) tests/functions.sh tests/netns.sh tests/migrate-hosts.sh tests/migrate-postcopy.sh tests/tools/rawclient.py tests/tools/device_events.py tests/tools/procstat.py tests/tools/fake-qemu.py tests/tools/build-test-guest.sh \
	tests/tools/subreaper.py tests/tools/libvirtd-qemu-ns.sh tests/tools/private-root.sh \
	tests/interop/python-checks.py tests/interop/save-checks.py tests/interop/metadata-checks.py tests/interop/transcript.py tests/interop/stream-checks.py \
	tests/interop/console-driver.py tests/interop/autodestroy-client.py tests/interop/graphics-fd-checks.py tests/interop/channel-checks.py \
	tests/interop/blockjob-checks.py tests/interop/backup-checks.py tests/interop/calls-checks.py tests/interop/agent-checks.py tests/interop/watchdog-events.py tests/interop/host-checks.py tests/interop/info-checks.py \
	tests/interop/rename-checks.py tests/interop/checkpoint-checks.py tests/interop/lifecycle-checks.py tests/interop/network-flags-checks.py tests/interop/network-update-checks.py tests/interop/save-params-checks.py tests/interop/perf-checks.py \
	tests/interop/jobs-checks.py tests/interop/dump-checks.py tests/interop/migtune-checks.py tests/interop/migrate-p2p-nova.py \
	tests/interop/console-driver.py \
	tests/interop/snapshot-checks.py tests/interop/bad-xml-checks.py \
	tests/interop/spec-facts.py tests/interop/blockjob-events.py \
	tests/interop/tune-checks.py \
	tests/interop/qemu-events-checks.py tests/interop/legacy-events.py \
	tests/interop/virt-manager-ui.py tests/interop/virt-manager-session.sh \
	tests/interop/nova-host.py \
	tests/interop/nova-hotplug.py \
	tests/interop/nova_setup.py \
	tests/interop/cockpit-hotplug.py \
	tests/interop/virt-manager-procs.py tests/interop/virt-manager-lib.sh

# client uri unit test
# Own CFLAGS so that client/uri.c gets an object of its own here (the
# library builds it with libtool).
check_PROGRAMS += tests/unit/test-uri
TESTS += tests/unit/test-uri
tests_unit_test_uri_SOURCES = tests/unit/test-uri.c client/uri.c client/uri.h
tests_unit_test_uri_CFLAGS = $(AM_CFLAGS)
tests_unit_test_uri_LDADD = libremvirt_common.la

# client threads test: 8 threads on one connection; takes the URI as its
# argument, so tests/integration/test-client-threads.sh runs it against a
# live daemon (it is not in TESTS itself).
check_PROGRAMS += tests/integration/client-threads
# client-async: libremvirt's asynchronous calls (test-client-async.sh).
check_PROGRAMS += tests/integration/client-async
tests_integration_client_async_SOURCES = tests/integration/client-async.c
tests_integration_client_async_LDADD = libremvirt.la $(PTHREAD_LIBS)
tests_integration_client_threads_SOURCES = tests/integration/client-threads.c
tests_integration_client_threads_LDADD = libremvirt.la $(PTHREAD_LIBS)
# libremvirt's calls rvsh has no command for (test-rvsh-domain-parity.sh)
check_PROGRAMS += tests/integration/domain-calls
tests_integration_domain_calls_SOURCES = tests/integration/domain-calls.c
tests_integration_domain_calls_LDADD = libremvirt.la
check_PROGRAMS += tests/integration/client-backpressure
tests_integration_client_backpressure_SOURCES = tests/integration/client-backpressure.c
tests_integration_client_backpressure_LDADD = libremvirt.la $(PTHREAD_LIBS)
# events subscriber for tests/integration/test-events-*.sh and
# test-keepalive-*.sh (not in TESTS itself)
check_PROGRAMS += tests/integration/event-client
tests_integration_event_client_SOURCES = tests/integration/event-client.c tests/integration/client-report.h
tests_integration_event_client_LDADD = libremvirt.la $(PTHREAD_LIBS)

# libremvirt against a lying server (tests/integration/test-hostile-server.sh
# runs it against hostile-server.py; not in TESTS itself)
check_PROGRAMS += tests/integration/hostile-client
tests_integration_hostile_client_SOURCES = tests/integration/hostile-client.c tests/integration/client-report.h
tests_integration_hostile_client_LDADD = libremvirt.la $(PTHREAD_LIBS)
EXTRA_DIST += tests/integration/hostile-server.py

# libremvirt's reader facing a full socket with part of a frame in hand
# (tests/integration/test-client-reader-race.sh runs it against
# reader-race-server.py; not in TESTS itself)
check_PROGRAMS += tests/integration/reader-race-client
tests_integration_reader_race_client_SOURCES = tests/integration/reader-race-client.c tests/integration/client-report.h
tests_integration_reader_race_client_LDADD = libremvirt.la $(PTHREAD_LIBS)
EXTRA_DIST += tests/integration/reader-race-server.py tests/tools/scripted_server.py

# libremvirt's shared connection against a server that answers out of
# order and hangs up with calls waiting (test-client-concurrency.sh runs
# it against shuffle-server.py; not in TESTS itself)
check_PROGRAMS += tests/integration/client-concurrency
tests_integration_client_concurrency_SOURCES = tests/integration/client-concurrency.c
tests_integration_client_concurrency_LDADD = libremvirt.la $(PTHREAD_LIBS)
EXTRA_DIST += tests/integration/shuffle-server.py

# client event loop unit test: the registry and the built-in poll() loop on
# real pipes, through the library's public functions (event-loop helper).
check_PROGRAMS += tests/unit/test-event
TESTS += tests/unit/test-event
tests_unit_test_event_SOURCES = tests/unit/test-event.c tests/unit/check.h
tests_unit_test_event_LDADD = libremvirt.la $(PTHREAD_LIBS)

# test driver unit test
# The driver's sources are built into the test itself (own CFLAGS, so their
# objects stay apart from libremvirtd.la's); tests/data/test-driver holds
# what libvirtd 9.0's test:///default answers, to compare byte for byte.
check_PROGRAMS += tests/unit/test-driver
TESTS += tests/unit/test-driver
tests_unit_test_driver_SOURCES = tests/unit/test-driver.c tests/unit/check.h
tests_unit_test_driver_LDADD = libremvirtd.la
EXTRA_DIST += tests/data/test-driver/capabilities.xml tests/data/test-driver/domain-test.xml

# test-domlist: the domain list both drivers keep their domains in.
check_PROGRAMS += tests/unit/test-domlist
TESTS += tests/unit/test-domlist
tests_unit_test_domlist_SOURCES = tests/unit/test-domlist.c tests/unit/check.h
tests_unit_test_domlist_LDADD = libremvirtd.la

# the generator: annotation parsing, table flags, docs/procedures.md up to date
TESTS += tests/unit/test_rvgen.py tests/unit/test_rvgen_java.py
EXTRA_DIST += tests/unit/test_rvgen.py tests/unit/test_rvgen_java.py
# libvirt's procedure table: format, order, API names and modules (against
# libvirt-api.xml from libvirt-dev), and the .x's numbers and names.
TESTS += tests/tools/check-proc-table.py
EXTRA_DIST += tests/tools/check-proc-table.py

# ---------------------------------------------------------------- tests/unit: QEMU driver parts (QEMU driver)
# test-qmp: the QMP client against a real qemu-system-x86_64 (skipped when
# it is not installed) and against a fake monitor the test plays itself.
check_PROGRAMS += tests/unit/test-qmp
TESTS += tests/unit/test-qmp
tests_unit_test_qmp_SOURCES = tests/unit/test-qmp.c tests/unit/check.h tests/unit/spawn.h
tests_unit_test_qmp_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
tests_unit_test_qmp_LDADD = libremvirt_qemu.la
# test-cpuid: the host CPU reader's table of CPUID bits against libvirt's
# own map (skipped without libvirt), and this CPU's signature against the
# kernel's.
check_PROGRAMS += tests/unit/test-cpuid
TESTS += tests/unit/test-cpuid
tests_unit_test_cpuid_SOURCES = tests/unit/test-cpuid.c tests/unit/check.h
tests_unit_test_cpuid_CPPFLAGS = $(AM_CPPFLAGS) $(LIBXML2_CFLAGS)
tests_unit_test_cpuid_LDADD = libremvirt_qemu.la
# test-domain-xml: the domain XML subset (round trip, refusals, hostile
# documents) and the QEMU command line built from it.
check_PROGRAMS += tests/unit/test-domain-xml
TESTS += tests/unit/test-domain-xml
tests_unit_test_domain_xml_SOURCES = tests/unit/test-domain-xml.c tests/unit/check.h
tests_unit_test_domain_xml_LDADD = libremvirt_qemu.la
# test-qemu-start: all three together: a domain XML's command line run
# with a real QEMU (skipped when missing), checked through QMP.
check_PROGRAMS += tests/unit/test-qemu-start
TESTS += tests/unit/test-qemu-start
tests_unit_test_qemu_start_SOURCES = tests/unit/test-qemu-start.c tests/unit/check.h tests/unit/spawn.h
tests_unit_test_qemu_start_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS)
tests_unit_test_qemu_start_LDADD = libremvirt_qemu.la

# ---------------------------------------------------------------- tests/unit: TLS transport and x509 policy (TLS helper)
# test-tls.sh makes a PKI with make-pki.sh (certtool) and runs test-tls on
# it: both sides over socketpairs, every refusal and its reason.
check_PROGRAMS += tests/unit/test-tls
tests_unit_test_tls_SOURCES = tests/unit/test-tls.c tests/unit/check.h
tests_unit_test_tls_CPPFLAGS = $(AM_CPPFLAGS) $(GNUTLS_CFLAGS)
tests_unit_test_tls_LDADD = libremvirt_common.la $(PTHREAD_LIBS)
TESTS += tests/unit/test-tls.sh
EXTRA_DIST += tests/unit/test-tls.sh tests/tools/make-pki.sh

# ---------------------------------------------------------------- tests/unit: SASL (SASL core helper)
# test-sasl.sh makes a sasldb (saslpasswd2) and remvirtd's SASL config in a
# temp dir and runs test-sasl on it: SCRAM-SHA-256 and DIGEST-MD5 both
# halves in one process, the security-layer transport over socketpairs.
check_PROGRAMS += tests/unit/test-sasl
tests_unit_test_sasl_SOURCES = tests/unit/test-sasl.c tests/unit/check.h
tests_unit_test_sasl_LDADD = libremvirt_common.la $(PTHREAD_LIBS)
TESTS += tests/unit/test-sasl.sh
EXTRA_DIST += tests/unit/test-sasl.sh tests/cyrus-sasl.supp tests/cyrus-sasl.lsan

# ---------------------------------------------------------------- tests/unit: client auth file (SASL client helper)
# GLib key-file syntax as libvirt reads auth.conf, lookups, errors with
# file:line, which file is read.  The interop side is
# tests/interop/test-rvsh-libvirtd-sasl.sh (in RV_DAEMON_TESTS).
check_PROGRAMS += tests/unit/test-authfile
TESTS += tests/unit/test-authfile
tests_unit_test_authfile_SOURCES = tests/unit/test-authfile.c tests/unit/check.h \
	client/authfile.c client/authfile.h
tests_unit_test_authfile_CFLAGS = $(AM_CFLAGS)
tests_unit_test_authfile_LDADD = libremvirt_common.la

# ---------------------------------------------------------------- tests/unit: headers (client library)
# Every project header alone, and every pair of them in both orders,
# compiles: no two define one name (client/remvirt.h against the internal
# ones above all).  With the project's compiler and flags:
TESTS += tests/unit/test-header-pairs.sh
EXTRA_DIST += tests/unit/test-header-pairs.sh
AM_TESTS_ENVIRONMENT += RV_HEADER_CC='$(CC)'; export RV_HEADER_CC; \
	RV_HEADER_CFLAGS='$(TIRPC_CFLAGS) $(GNUTLS_CFLAGS) $(LIBSSH2_CFLAGS) $(LIBXML2_CFLAGS) $(CPPFLAGS) \
	$(AM_CFLAGS) $(CFLAGS)'; export RV_HEADER_CFLAGS;

# ---------------------------------------------------------------- tests: the generated public API (client library)
# libremvirt exports exactly what its headers declare and its version
# script lists; and adding a procedure served by both drivers takes one .x
# entry and one slot per driver, checked end to end in a copy of the tree
# (protocol/rv_remote.x, test_ops.c and qemu_ops.c; the generator writes
# the rest, down to the public function).
TESTS += tests/unit/test-exports.sh tests/integration/test-add-procedure.sh
EXTRA_DIST += tests/unit/test-exports.sh tests/integration/test-add-procedure.sh

# ---------------------------------------------------------------- tests/fuzz: the client fuzzer and `make fuzz` (fuzzing helper)
# fuzz-client plays a hostile server to libremvirt while an application
# thread and the library's event loop run as in a real program.  The
# library's sources are built into it (own CFLAGS, so the objects stay apart
# from libremvirt.la's): it hands the library a socketpair through
# rvc_test_transport_hook, which the shared library does not export.  Its
# plain mode (a few seconds of mutated recorded sessions) runs in make check.
check_PROGRAMS += tests/fuzz/fuzz-client
TESTS += tests/fuzz/fuzz-client
# fuzz-xml: the drivers' shared XML layer, every family round-tripped.
check_PROGRAMS += tests/fuzz/fuzz-xml
TESTS += tests/fuzz/fuzz-xml
tests_fuzz_fuzz_xml_SOURCES = tests/fuzz/fuzz-xml.c
tests_fuzz_fuzz_xml_CPPFLAGS = $(AM_CPPFLAGS) $(LIBXML2_CFLAGS)
tests_fuzz_fuzz_xml_LDADD = libremvirtd.la
tests_fuzz_fuzz_client_SOURCES = tests/fuzz/fuzz-client.c tests/unit/check.h $(libremvirt_client_la_SOURCES)
tests_fuzz_fuzz_client_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_client_LDADD = libremvirt_common.la $(PTHREAD_LIBS)
EXTRA_DIST += tests/fuzz/README tests/fuzz/corpus tests/fuzz/record-client-corpus.sh \
	tests/fuzz/craft-client-seeds.py

# `make fuzz` (after CC=clang-14 ../configure --enable-fuzzing): both
# fuzzers for libFuzzer with ASan and UBSan.  Every source they reach is
# compiled into them with coverage, the rpcgen decoders included (hence
# rpcgen's warning exceptions); the rest of the build keeps its flags.
RV_FUZZ_TARGET_CFLAGS = $(AM_CFLAGS) $(RV_FUZZ_CFLAGS) \
	-Wno-unused-variable -Wno-missing-prototypes -Wno-shadow
RV_FUZZ_TARGET_LIBS = $(TIRPC_LIBS) $(PTHREAD_LIBS) $(LIBSSH2_LIBS) $(GNUTLS_LIBS) $(SASL_LIBS)
EXTRA_PROGRAMS = tests/fuzz/fuzz-dispatch-lf tests/fuzz/fuzz-client-lf tests/fuzz/fuzz-xml-lf
tests_fuzz_fuzz_xml_lf_SOURCES = tests/fuzz/fuzz-xml.c \
	$(libremvirtd_la_SOURCES) $(libremvirt_qemu_la_SOURCES) $(libremvirt_conf_la_SOURCES) $(libremvirt_common_la_SOURCES)
nodist_tests_fuzz_fuzz_xml_lf_SOURCES = $(RV_XDR_C_FILES)
tests_fuzz_fuzz_xml_lf_SOURCES += $(libremvirt_xdr_la_SOURCES)
tests_fuzz_fuzz_xml_lf_CPPFLAGS = $(libremvirt_common_la_CPPFLAGS) $(JSONC_CFLAGS) $(LIBXML2_CFLAGS)
tests_fuzz_fuzz_xml_lf_CFLAGS = $(RV_FUZZ_TARGET_CFLAGS)
tests_fuzz_fuzz_xml_lf_LDFLAGS = $(RV_FUZZ_LDFLAGS)
tests_fuzz_fuzz_xml_lf_LDADD = $(EV_LIBS) $(JSONC_LIBS) $(LIBXML2_LIBS) $(RV_FUZZ_TARGET_LIBS)
tests_fuzz_fuzz_dispatch_lf_SOURCES = tests/fuzz/fuzz-dispatch.c \
	$(libremvirtd_la_SOURCES) $(libremvirt_qemu_la_SOURCES) $(libremvirt_conf_la_SOURCES) $(libremvirt_common_la_SOURCES)
nodist_tests_fuzz_fuzz_dispatch_lf_SOURCES = $(RV_XDR_C_FILES)
tests_fuzz_fuzz_dispatch_lf_SOURCES += $(libremvirt_xdr_la_SOURCES)
tests_fuzz_fuzz_dispatch_lf_CPPFLAGS = $(libremvirt_common_la_CPPFLAGS) $(JSONC_CFLAGS) $(LIBXML2_CFLAGS)
tests_fuzz_fuzz_dispatch_lf_CFLAGS = $(RV_FUZZ_TARGET_CFLAGS)
tests_fuzz_fuzz_dispatch_lf_LDFLAGS = $(RV_FUZZ_LDFLAGS)
tests_fuzz_fuzz_dispatch_lf_LDADD = $(EV_LIBS) $(JSONC_LIBS) $(LIBXML2_LIBS) $(RV_FUZZ_TARGET_LIBS)
tests_fuzz_fuzz_client_lf_SOURCES = tests/fuzz/fuzz-client.c \
	$(libremvirt_client_la_SOURCES) $(libremvirt_common_la_SOURCES)
nodist_tests_fuzz_fuzz_client_lf_SOURCES = $(RV_XDR_C_FILES)
tests_fuzz_fuzz_client_lf_SOURCES += $(libremvirt_xdr_la_SOURCES)
tests_fuzz_fuzz_client_lf_CPPFLAGS = $(libremvirt_common_la_CPPFLAGS)
tests_fuzz_fuzz_client_lf_CFLAGS = $(RV_FUZZ_TARGET_CFLAGS)
tests_fuzz_fuzz_client_lf_LDFLAGS = $(RV_FUZZ_LDFLAGS)
tests_fuzz_fuzz_client_lf_LDADD = $(RV_FUZZ_TARGET_LIBS)
CLEANFILES += $(EXTRA_PROGRAMS)
# The generated headers (BUILT_SOURCES) come first, as `make all` makes
# them: from a fresh build directory nothing else has.
fuzz:
	@test -n "$(RV_FUZZ_LDFLAGS)" || { echo "make fuzz: configure with CC=clang-14 ../configure --enable-fuzzing (see tests/fuzz/README)" >&2; exit 1; }
	$(MAKE) $(AM_MAKEFLAGS) $(BUILT_SOURCES)
	$(MAKE) $(AM_MAKEFLAGS) $(EXTRA_PROGRAMS)
.PHONY: fuzz

# ---------------------------------------------------------------- installed as a service (issue 17)
# Socket activation through systemd-socket-activate (no running systemd:
# tests/tools/socket-manager.py holds the sockets as socket units do);
# make install into a DESTDIR with its file list; as root, the Debian
# package built (about a minute), checked by lintian, installed, run and
# purged.
RV_SERVICE_TESTS = \
	tests/integration/test-socket-activation.sh \
	tests/integration/test-install.sh \
	tests/integration/test-deb.sh
TESTS += $(RV_SERVICE_TESTS)
EXTRA_DIST += $(RV_SERVICE_TESTS) tests/tools/socket-manager.py

# ---------------------------------------------------------------- a newcomer's first steps (issues 33, 36)
# The README's quick start with a real guest, from a copy of the tree as
# a fresh clone has it; every command the tests require comes from a
# package tests/check.sh installs on a bare Debian 12.
RV_NEWCOMER_TESTS = \
	tests/integration/test-deps-listed.py \
	tests/integration/test-quickstart-qemu.sh
TESTS += $(RV_NEWCOMER_TESTS)
EXTRA_DIST += $(RV_NEWCOMER_TESTS)
