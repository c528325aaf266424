# tests/: included from the top Makefile.am.
