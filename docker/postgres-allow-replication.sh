#!/bin/sh
# Run once by the postgres image when it creates its data folder (docker-entrypoint-initdb.d):
# lets the optional postgres-replica service (profile "replica") stream from this server with
# the same password. A data folder made before this file existed needs the line added by hand.
set -e
echo "host replication ${POSTGRES_USER} all scram-sha-256" >> "$PGDATA/pg_hba.conf"
