# The probe image: the tool's own static binary and nothing else. The tool
# builds it from its own executable on first use (tag = content hash).
FROM scratch
COPY ssebench-audit /ssebench-audit
USER 0:0
ENTRYPOINT ["/ssebench-audit", "probe"]
