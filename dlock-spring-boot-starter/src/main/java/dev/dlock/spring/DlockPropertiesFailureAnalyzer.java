package dev.dlock.spring;

import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;

/**
 * Turns {@code dlock.*} values that failed their checks at binding ({@link PropertyChecks}) into Spring
 * Boot's "APPLICATION FAILED TO START" report, one line per bad value: the property as it is written in
 * configuration files ({@code dlock.lease-time}), the value as written ({@code -5s}) and where, and the rule.
 * Boot's own report of a validation failure gives the Java field name and the converted value instead
 * ({@code dlock.leaseTime}, {@code PT-5S}); this analyzer runs before it, and only for {@code dlock}.
 */
final class DlockPropertiesFailureAnalyzer extends AbstractFailureAnalyzer<BindValidationException> implements Ordered {
    private final Environment environment;

    DlockPropertiesFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, BindValidationException cause) {
        String prefix = cause.getValidationErrors().getName().toString();
        if (!prefix.equals("dlock")) {
            return null;
        }
        StringBuilder description = new StringBuilder();
        for (ObjectError error : cause.getValidationErrors().getAllErrors()) {
            if (!description.isEmpty()) {
                description.append(System.lineSeparator());
            }
            if (error instanceof FieldError field) {
                String property = prefix + "." + DataObjectPropertyName.toDashedForm(field.getField());
                String written = environment.getProperty(property, String.valueOf(field.getRejectedValue()));
                Origin origin = Origin.from(field);
                description
                        .append("Invalid value '")
                        .append(written)
                        .append("' for configuration property '")
                        .append(property)
                        .append("'")
                        .append(origin != null ? " (" + origin + ")" : "")
                        .append(": ")
                        .append(field.getDefaultMessage());
            } else {
                description.append(error.getDefaultMessage());
            }
        }
        return new FailureAnalysis(
                description.toString(),
                "Correct the value of each dlock property above; docs/dlock-spring-boot-starter.md lists them"
                        + " with their ranges.",
                cause);
    }
}
