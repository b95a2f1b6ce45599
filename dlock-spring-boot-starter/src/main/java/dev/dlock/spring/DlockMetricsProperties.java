package dev.dlock.spring;

import java.util.ArrayList;
import java.util.List;

/** The {@code dlock.metrics.*} properties. */
public class DlockMetricsProperties {
    /** Whether lock events are recorded as Micrometer meters when a MeterRegistry bean exists. */
    private boolean enabled = true;

    /**
     * Lock name patterns used as the 'name' tag, where '*' matches any characters, for example
     * 'order:*'. The first match wins; names matching none are tagged 'other', so the number of
     * meters stays bounded however many lock names there are.
     */
    private List<String> namePatterns = new ArrayList<>();

    /** Creates the defaults. */
    public DlockMetricsProperties() {}

    /**
     * Whether metrics are recorded.
     *
     * @return true to record
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether metrics are recorded.
     *
     * @param enabled true to record
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * The name patterns.
     *
     * @return the patterns, in matching order
     */
    public List<String> getNamePatterns() {
        return namePatterns;
    }

    /**
     * Sets the name patterns.
     *
     * @param namePatterns the patterns, in matching order
     */
    public void setNamePatterns(List<String> namePatterns) {
        this.namePatterns = namePatterns;
    }
}
