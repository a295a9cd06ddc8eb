#!/usr/bin/env python3
# tests/e2e/clients/pymysql_battery.py: PyMySQL (a client written in pure
# Python, not libmariadb) through what the server offers: text protocol,
# multi-statements and procedures with several result sets, a 17 MiB blob
# (split packets both ways), an unbuffered 10,000-row read, LOAD DATA LOCAL
# INFILE, COM_INIT_DB, COM_PING, transactions, warnings and errors.
#
#   pymysql_battery.py HOST PORT
#
# One line per check, "name: value", values that do not depend on which
# connection or when; tests/e2e/mysql_clients.sh runs it against MariaDB
# and through the proxy and compares the two outputs.

import hashlib
import os
import sys
import tempfile

import pymysql
import pymysql.cursors
from pymysql.constants import CLIENT

host, port = sys.argv[1], int(sys.argv[2])


def out(name, value):
    print(f"{name}: {value}", flush=True)


def connect(**kw):
    args = dict(host=host, port=port, user="sbtest", password="sbtest", database="sbtest", charset="utf8mb4",
                connect_timeout=10, read_timeout=30, write_timeout=30)
    args.update(kw)
    return pymysql.connect(**args)


def error_of(fn):
    try:
        fn()
        return "no error"
    except pymysql.MySQLError as e:
        return f"{e.args[0]}"


c = connect(client_flag=CLIENT.MULTI_STATEMENTS, local_infile=True, autocommit=True)
cur = c.cursor()
out("server_version", c.get_server_info())
cur.execute("DROP TABLE IF EXISTS py_t")
cur.execute("CREATE TABLE py_t (id INT PRIMARY KEY AUTO_INCREMENT, s VARCHAR(255), b LONGBLOB, "
            "d DECIMAL(20,6), f DOUBLE, dt DATETIME(6), n INT NULL) CHARACTER SET utf8mb4")

# Every byte value, Unicode beyond the BMP, NULLs, the numeric types.
rows = [("plain", bytes(range(256)), "12345.678901", 1.5e300, "2026-12-06 10:11:12.123456", None),
        ("ünïcödé ✓ 𝄞", b"\x00\xff" * 100, "-0.000001", -0.0, "1970-01-01 00:00:01.000000", 7),
        ("quote ' and \\ backslash", b"", "0", 3.141592653589793, "9999-12-31 23:59:59.999999", -1)]
n = cur.executemany("INSERT INTO py_t (s, b, d, f, dt, n) VALUES (%s, %s, %s, %s, %s, %s)", rows)
out("executemany_rows", n)
cur.execute("SELECT id, s, HEX(b), d, f, dt, n FROM py_t ORDER BY id")
for r in cur.fetchall():
    out("row", repr(r))
out("description", [(d[0], d[1]) for d in cur.description])

# Two statements in one query, and a procedure with two result sets.
cur.execute("SELECT 1 AS one; SELECT 'two', 2")
sets = [cur.fetchall()]
while cur.nextset():
    sets.append(cur.fetchall())
out("multi_statement_sets", sets)
cur.execute("DROP PROCEDURE IF EXISTS py_p")
cur.execute("CREATE PROCEDURE py_p(IN x INT) BEGIN SELECT x * 2 AS doubled; SELECT COUNT(*) FROM py_t; END")
cur.execute("CALL py_p(21)")
sets = [cur.fetchall()]
while cur.nextset():
    sets.append(cur.fetchall())
out("procedure_sets", sets)

# 17 MiB: more than one protocol packet (2^24 - 1 bytes) each way.
big = hashlib.sha256(b"seed").digest() * (17 * 1024 * 1024 // 32)
cur.execute("INSERT INTO py_t (s, b) VALUES ('big', %s)", (big,))
cur.execute("SELECT LENGTH(b), SHA2(b, 256) FROM py_t WHERE s = 'big'")
out("big_on_server", cur.fetchone())
cur.execute("SELECT b FROM py_t WHERE s = 'big'")
back = cur.fetchone()[0]
out("big_back", (len(back), hashlib.sha256(back).hexdigest() == hashlib.sha256(big).hexdigest()))

# 10,000 rows unbuffered (read as they come).
sc = c.cursor(pymysql.cursors.SSCursor)
sc.execute("SELECT id, k, c FROM sbtest1 ORDER BY id")
h, count = hashlib.sha256(), 0
for r in sc:
    h.update(repr(r).encode())
    count += 1
sc.close()
out("unbuffered_rows", (count, h.hexdigest()))

# LOAD DATA LOCAL INFILE: the server asks, the client sends the file.
with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    for i in range(500):
        f.write(f"local-{i}\t{i}\n")
    path = f.name
cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE py_t (s, n)")
os.unlink(path)
cur.execute("SELECT COUNT(*), SUM(n) FROM py_t WHERE s LIKE 'local-%'")
out("load_data_local", cur.fetchone())

# COM_INIT_DB, COM_PING, transactions, warnings, errors.
c.select_db("information_schema")
cur.execute("SELECT DATABASE()")
out("init_db", cur.fetchone())
c.select_db("sbtest")
c.ping(reconnect=False)
out("ping", "ok")
c.autocommit(False)
cur.execute("INSERT INTO py_t (s) VALUES ('rolled back')")
c.rollback()
cur.execute("INSERT INTO py_t (s) VALUES ('committed')")
c.commit()
cur.execute("SELECT s FROM py_t WHERE s IN ('rolled back', 'committed')")
out("transactions", cur.fetchall())
c.autocommit(True)
cur.execute("INSERT IGNORE INTO py_t (id, s) VALUES (1, 'duplicate')")
cur.execute("SHOW WARNINGS")
out("warnings", [(w[0], w[1]) for w in cur.fetchall()])
out("syntax_error", error_of(lambda: cur.execute("SELEC 1")))
out("duplicate_key", error_of(lambda: cur.execute("INSERT INTO py_t (id) VALUES (1)")))
out("unknown_table", error_of(lambda: cur.execute("SELECT * FROM no_such_table")))
cur.execute("SELECT 'still usable'")
out("after_errors", cur.fetchone())
cur.execute("DROP PROCEDURE py_p")
cur.execute("DROP TABLE py_t")
c.close()

# Sessions that fail at the handshake.
out("wrong_password", error_of(lambda: connect(password="wrong")))
out("unknown_database", error_of(lambda: connect(database="no_such_db")))
