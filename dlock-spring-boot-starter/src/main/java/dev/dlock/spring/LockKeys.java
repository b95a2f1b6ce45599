package dev.dlock.spring;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionParser;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * The key expressions of one {@link WithLock} method: parsed and checked once (a variable that is not a
 * parameter fails the application's start), evaluated per call into lock names.
 *
 * <p>Concurrency: immutable after construction; {@link #names} builds a fresh evaluation context per call.
 *
 * <p>Failure modes: construction throws {@link IllegalStateException} starting with the method's label;
 * {@link #names} throws {@link IllegalArgumentException} for a key that evaluates to nothing, before the
 * lock is asked for.
 */
final class LockKeys {
    private static final ExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();
    private static final Pattern POSITIONAL = Pattern.compile("[pa](\\d{1,4})");

    private final String label;
    private final Method method;
    private final Class<?> targetClass;
    private final List<Expression> keys;
    private final BeanFactoryResolver beans;

    /**
     * Parses the key expressions.
     *
     * @param label the method's label, which starts every message
     * @throws IllegalStateException when there is no key, or a key is empty, not SpEL, or names a variable
     *     that is not a parameter
     */
    LockKeys(String label, String[] sources, Method method, Class<?> targetClass, BeanFactory beanFactory) {
        this.label = label;
        this.method = method;
        this.targetClass = targetClass;
        this.beans = beanFactory != null ? new BeanFactoryResolver(beanFactory) : null;
        this.keys = parse(sources);
    }

    /** The lock names of one call, and whether they make a multi-lock. */
    record Names(List<String> names, boolean multi) {}

    /** How many key expressions the annotation gives. */
    int count() {
        return keys.size();
    }

    /** The first key expression, as written. */
    String first() {
        return keys.get(0).getExpressionString();
    }

    private IllegalStateException invalid(String problem) {
        return new IllegalStateException(label + ": " + problem);
    }

    private List<Expression> parse(String[] sources) {
        if (sources.length == 0) {
            throw invalid("no key: give at least one SpEL expression, e.g. key = \"'order:' + #orderId\"");
        }
        List<Expression> parsed = new ArrayList<>();
        for (String source : sources) {
            if (source == null || source.isBlank()) {
                throw invalid("a key expression is empty");
            }
            Expression expression;
            try {
                expression = PARSER.parseExpression(source);
            } catch (ParseException e) {
                throw new IllegalStateException(
                        label + ": key \"" + source + "\" is not a valid SpEL expression: " + e.getMessage(), e);
            }
            if (expression instanceof SpelExpression spel) {
                checkVariables(spel.getAST(), source);
            }
            parsed.add(expression);
        }
        return List.copyOf(parsed);
    }

    /**
     * Fails for a variable that is not a parameter: a typo, or names missing from the bytecode, would
     * otherwise make the key say {@code null} and serialise unrelated calls.
     */
    private void checkVariables(SpelNode node, String source) {
        if (node instanceof VariableReference) {
            String variable = node.toStringAST().substring(1);
            Matcher positional = POSITIONAL.matcher(variable);
            boolean known = variable.equals("root")
                    || variable.equals("this")
                    || (positional.matches() && Integer.parseInt(positional.group(1)) < method.getParameterCount());
            if (!known) {
                String[] names = PARAMETER_NAMES.getParameterNames(method);
                if (names == null) {
                    throw invalid("key \"" + source + "\" refers to #" + variable + ", but the parameter names of the"
                            + " method are not in its bytecode: compile with -parameters (Spring Boot's build"
                            + " plugins do) or use #p0, #p1, ...");
                }
                if (!Arrays.asList(names).contains(variable)) {
                    throw invalid("key \"" + source + "\" refers to #" + variable + ", which is not a parameter of"
                            + " the method (parameters: " + String.join(", ", names) + ")");
                }
            }
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            checkVariables(node.getChild(i), source);
        }
    }

    /**
     * Evaluates the keys for one call.
     *
     * @throws IllegalArgumentException when a key evaluates to null, an empty string or an empty collection
     */
    Names names(Object target, Object[] args) {
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                new KeyRoot(method, args, target, targetClass), method, args, PARAMETER_NAMES);
        if (beans != null) {
            context.setBeanResolver(beans);
        }
        List<String> names = new ArrayList<>();
        boolean multi = keys.size() > 1;
        for (Expression key : keys) {
            Object value = key.getValue(context);
            if (value instanceof Collection<?>
                    || (value != null && value.getClass().isArray())) {
                multi = true;
                Collection<?> items = value instanceof Collection<?> c ? c : Arrays.asList(toObjects(value));
                if (items.isEmpty()) {
                    throw emptyKey(key, "an empty collection");
                }
                for (Object item : items) {
                    names.add(nameOf(key, item));
                }
            } else {
                names.add(nameOf(key, value));
            }
        }
        return new Names(names, multi);
    }

    private static Object[] toObjects(Object array) {
        if (array instanceof Object[] objects) {
            return objects;
        }
        int length = Array.getLength(array);
        Object[] boxed = new Object[length];
        for (int i = 0; i < length; i++) {
            boxed[i] = Array.get(array, i);
        }
        return boxed;
    }

    private String nameOf(Expression key, Object value) {
        if (value == null) {
            throw emptyKey(key, "null (is an argument it uses null?)");
        }
        String name = value.toString();
        if (name.isEmpty()) {
            throw emptyKey(key, "an empty string");
        }
        return name;
    }

    private IllegalArgumentException emptyKey(Expression key, String what) {
        return new IllegalArgumentException(label + ": key \"" + key.getExpressionString() + "\" evaluated to " + what
                + "; the method was not called");
    }

    /**
     * The root object of key expressions: {@code #root.method}, {@code #root.args}, {@code #root.target},
     * {@code #root.targetClass}.
     *
     * @param method the method
     * @param args the call's arguments
     * @param target the bean
     * @param targetClass the bean's class
     */
    record KeyRoot(Method method, Object[] args, Object target, Class<?> targetClass) {
        /**
         * The method name.
         *
         * @return the name
         */
        public String methodName() {
            return method.getName();
        }
    }
}
