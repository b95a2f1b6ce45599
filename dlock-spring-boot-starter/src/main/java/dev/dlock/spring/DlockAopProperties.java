package dev.dlock.spring;

/** The {@code dlock.aop.*} properties. */
public class DlockAopProperties {
    /** Whether methods annotated with @WithLock are advised. */
    private boolean enabled = true;

    /**
     * The order of the @WithLock advice among other advice on the same method. The default
     * runs it outside @Transactional and @Cacheable (whose order is the lowest precedence), so that a
     * transaction commits before the lock is released.
     */
    private int order = DEFAULT_ORDER;

    /** The default {@link #getOrder() order}: {@code Ordered.LOWEST_PRECEDENCE - 1000}. */
    public static final int DEFAULT_ORDER = Integer.MAX_VALUE - 1000;

    /** Creates the defaults. */
    public DlockAopProperties() {}

    /**
     * Whether the annotation is active.
     *
     * @return true when active
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether the annotation is active.
     *
     * @param enabled true to activate
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * The advice order.
     *
     * @return the order
     */
    public int getOrder() {
        return order;
    }

    /**
     * Sets the advice order.
     *
     * @param order the order, lower runs further outside
     */
    public void setOrder(int order) {
        this.order = order;
    }
}
