# The fixture stubs (proxy, database, daemon and DNS stand-ins): the same
# static binary, started with the hidden fixture-stub subcommand.
FROM scratch
COPY ssebench-audit /ssebench-audit
ENTRYPOINT ["/ssebench-audit", "fixture-stub"]
