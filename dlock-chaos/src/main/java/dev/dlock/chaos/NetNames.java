package dev.dlock.chaos;

/**
 * The host-wide names of one fault-suite run's network: its namespaces, veth links and addresses, all
 * derived from the run's slot, so that two runs on one machine (two CI lanes, a developer's run beside
 * CI) neither share nor remove each other's.
 *
 * <p>A slot is a number below {@value #SLOTS}; {@link Net} takes the first free one from the process id
 * on (free: its store address is not on the loopback device). Names stay within Linux's 15-character
 * interface names: {@code dlc<slot>s<client>h} is at most 9 characters for 99 clients. Addresses: the
 * run's second octet is {@code 100 + slot}; the store listens on {@code 10.<b>.0.1} and the resource on
 * {@code 10.<b>.128.1}; client {@code id}'s links are the /30 subnets {@code 10.<b>.<id + 1>.0} (store
 * side) and {@code 10.<b>.<id + 129>.0} (resource side).
 *
 * @param slot this run's slot, 0 to {@value #SLOTS} - 1
 */
record NetNames(int slot) {
    /** How many runs can share a machine. */
    static final int SLOTS = 100;

    /** The most clients a run can have (one /30 subnet each on either side). */
    static final int MAX_CLIENTS = 99;

    NetNames {
        if (slot < 0 || slot >= SLOTS) {
            throw new IllegalArgumentException("slot " + slot + " is not in 0.." + (SLOTS - 1));
        }
    }

    /** The slot a run of process {@code pid} tries first. */
    static NetNames forProcess(long pid) {
        return new NetNames((int) (pid % SLOTS));
    }

    /** The next slot, wrapping around. */
    NetNames next() {
        return new NetNames((slot + 1) % SLOTS);
    }

    private String prefix() {
        return "dlc" + slot;
    }

    /** Client {@code id}'s network namespace. */
    String namespace(int id) {
        return prefix() + "c" + checked(id);
    }

    /**
     * The host end of client {@code id}'s link to the store ({@code 's'}) or the resource ({@code 'r'}).
     */
    String hostLink(char kind, int id) {
        return prefix() + kind + checked(id) + "h";
    }

    /** The namespace end of that link. */
    String innerLink(char kind, int id) {
        return prefix() + kind + checked(id) + "n";
    }

    /** Whether a namespace or link of this name belongs to this slot. */
    boolean owns(String name) {
        return name.matches(prefix() + "(c\\d+|[sr]\\d+[hn])");
    }

    String storeIp() {
        return "10." + octet() + ".0.1";
    }

    String resourceIp() {
        return "10." + octet() + ".128.1";
    }

    /** The first three octets of client {@code id}'s /30 subnet to the store or the resource, with a dot. */
    String subnet(char kind, int id) {
        return "10." + octet() + "." + (checked(id) + (kind == 's' ? 1 : 129)) + ".";
    }

    private int octet() {
        return 100 + slot;
    }

    private static int checked(int id) {
        if (id < 0 || id > MAX_CLIENTS) {
            throw new IllegalArgumentException("client " + id + " is not in 0.." + MAX_CLIENTS);
        }
        return id;
    }
}
