package org.remvirt.client;

import java.util.ArrayList;
import java.util.List;
import org.remvirt.proto.RemoteProtocol;
import org.remvirt.proto.RvTypedParam;
import org.remvirt.proto.RvTypedParamValue;

/**
 * One named, typed value of the calls that take or return typed parameters
 * (tuning getters and setters, domain statistics): its name, its type
 * (RemoteProtocol.RV_TYPED_PARAM_INT ... _STRING) and its value as an
 * Integer (INT, UINT: the bits as sent), Long (LLONG, ULLONG), Double,
 * Boolean or String.  The generated calls of
 * {@link org.remvirt.proto.RemoteCalls} take and return lists of them.
 */
public final class TypedParameter {
    public final String name;
    public final int type;
    public final Object value;

    private TypedParameter(String name, int type, Object value) {
        this.name = name;
        this.type = type;
        this.value = value;
    }

    public static TypedParameter ofInt(String name, int v) {
        return new TypedParameter(name, RemoteProtocol.RV_TYPED_PARAM_INT, v);
    }

    public static TypedParameter ofUInt(String name, int v) {
        return new TypedParameter(name, RemoteProtocol.RV_TYPED_PARAM_UINT, v);
    }

    public static TypedParameter ofLong(String name, long v) {
        return new TypedParameter(name, RemoteProtocol.RV_TYPED_PARAM_LLONG, v);
    }

    public static TypedParameter ofULong(String name, long v) {
        return new TypedParameter(name, RemoteProtocol.RV_TYPED_PARAM_ULLONG, v);
    }

    public static TypedParameter ofDouble(String name, double v) {
        return new TypedParameter(name, RemoteProtocol.RV_TYPED_PARAM_DOUBLE, v);
    }

    public static TypedParameter ofBoolean(String name, boolean v) {
        return new TypedParameter(name, RemoteProtocol.RV_TYPED_PARAM_BOOLEAN, v);
    }

    public static TypedParameter ofString(String name, String v) {
        return new TypedParameter(name, RemoteProtocol.RV_TYPED_PARAM_STRING, v);
    }

    /** The value as a number: unsigned types as unsigned, a boolean as 1 or 0. */
    public long longValue() {
        switch (type) {
        case RemoteProtocol.RV_TYPED_PARAM_UINT:
            return Integer.toUnsignedLong((Integer) value);
        case RemoteProtocol.RV_TYPED_PARAM_BOOLEAN:
            return (Boolean) value ? 1 : 0;
        case RemoteProtocol.RV_TYPED_PARAM_DOUBLE:
            return (long) (double) (Double) value;
        case RemoteProtocol.RV_TYPED_PARAM_STRING:
            throw new IllegalStateException(name + " is a string");
        default:
            return ((Number) value).longValue();
        }
    }

    /** The parameter named name in params, or null. */
    public static TypedParameter find(List<TypedParameter> params, String name) {
        for (TypedParameter p : params)
            if (p.name.equals(name))
                return p;
        return null;
    }

    @Override
    public String toString() {
        return name + "=" + (type == RemoteProtocol.RV_TYPED_PARAM_ULLONG ? Long.toUnsignedString((Long) value)
                : type == RemoteProtocol.RV_TYPED_PARAM_UINT ? Integer.toUnsignedString((Integer) value)
                : String.valueOf(value));
    }

    public static List<RvTypedParam> toWire(List<TypedParameter> params) {
        List<RvTypedParam> out = new ArrayList<>(params.size());
        for (TypedParameter p : params) {
            RvTypedParamValue v = new RvTypedParamValue();
            v.type = p.type;
            switch (p.type) {
            case RemoteProtocol.RV_TYPED_PARAM_INT: v.i = (Integer) p.value; break;
            case RemoteProtocol.RV_TYPED_PARAM_UINT: v.ui = (Integer) p.value; break;
            case RemoteProtocol.RV_TYPED_PARAM_LLONG: v.l = (Long) p.value; break;
            case RemoteProtocol.RV_TYPED_PARAM_ULLONG: v.ul = (Long) p.value; break;
            case RemoteProtocol.RV_TYPED_PARAM_DOUBLE: v.d = (Double) p.value; break;
            case RemoteProtocol.RV_TYPED_PARAM_BOOLEAN: v.b = (Boolean) p.value ? 1 : 0; break;
            default: v.s = (String) p.value; break;
            }
            out.add(new RvTypedParam(p.name, v));
        }
        return out;
    }

    /** The server's parameters; a type this client does not know is refused
     * (the XDR decoder has already refused it: no arm for it). */
    public static List<TypedParameter> fromWire(List<RvTypedParam> params) {
        List<TypedParameter> out = new ArrayList<>(params.size());
        for (RvTypedParam p : params) {
            RvTypedParamValue v = p.value;
            Object value;
            switch (v.type) {
            case RemoteProtocol.RV_TYPED_PARAM_INT: value = v.i; break;
            case RemoteProtocol.RV_TYPED_PARAM_UINT: value = v.ui; break;
            case RemoteProtocol.RV_TYPED_PARAM_LLONG: value = v.l; break;
            case RemoteProtocol.RV_TYPED_PARAM_ULLONG: value = v.ul; break;
            case RemoteProtocol.RV_TYPED_PARAM_DOUBLE: value = v.d; break;
            case RemoteProtocol.RV_TYPED_PARAM_BOOLEAN: value = v.b != 0; break;
            default: value = v.s; break;
            }
            out.add(new TypedParameter(p.field, v.type, value));
        }
        return out;
    }

    /** What a call returns for each of several objects (a domain's
     * statistics): the object and its parameters. */
    public static final class Keyed<K> {
        public final K key;
        public final List<TypedParameter> params;

        public Keyed(K key, List<TypedParameter> params) {
            this.key = key;
            this.params = params;
        }
    }
}
