package dev.dlock.spring;

import dev.dlock.LeaderElection;
import dev.dlock.LockClient;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Applies {@link OnLeader}: the pointcut matches annotated methods, checks each annotation while the bean
 * is proxied and records its election name; as a {@link SmartLifecycle} it joins every recorded election
 * when the context starts and resigns them when it stops; as the advice it lets a call through only while
 * its election's candidate leads.
 *
 * <p>Concurrency: names and elections live in concurrent maps; {@link LeaderElection#isLeader()} never
 * blocks, so a call costs a map lookup. Started last and stopped first (the default phase), so the
 * application's other beans are ready while it leads.
 *
 * <p>Failure modes: an invalid annotation throws {@link IllegalStateException} from the pointcut, which
 * fails the creation of the bean. A store that fails keeps the candidates campaigning (they retry), and
 * calls are skipped meanwhile; a resignation the store did not confirm is left to the lease.
 */
final class OnLeaderAdvisor extends AbstractPointcutAdvisor implements MethodInterceptor, SmartLifecycle {
    private static final long serialVersionUID = 1L;

    private final transient ObjectProvider<LockClient> client;
    private final transient ConcurrentHashMap<Method, Optional<String>> names = new ConcurrentHashMap<>();
    private final transient ConcurrentHashMap<String, LeaderElection> elections = new ConcurrentHashMap<>();
    private final transient Pointcut pointcut = new AnnotatedMethods();
    private volatile boolean running;

    OnLeaderAdvisor(ObjectProvider<LockClient> client, int order) {
        this.client = client;
        setOrder(order);
    }

    /** The election a method called on a target class runs under, or null when it is not annotated. */
    String election(Method method, Class<?> targetClass) {
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        return names.computeIfAbsent(specific, m -> {
                    OnLeader annotation = AnnotatedElementUtils.findMergedAnnotation(m, OnLeader.class);
                    if (annotation == null && m != method) {
                        annotation = AnnotatedElementUtils.findMergedAnnotation(method, OnLeader.class);
                    }
                    if (annotation == null) {
                        return Optional.empty();
                    }
                    String where = "@OnLeader on " + m.getDeclaringClass().getName() + "." + m.getName() + "()";
                    if (annotation.value().isBlank()) {
                        throw new IllegalStateException(where + " needs an election name");
                    }
                    if (m.getReturnType().isPrimitive() && m.getReturnType() != void.class) {
                        throw new IllegalStateException(where + " returns " + m.getReturnType()
                                + ", which a call skipped on a non-leader cannot return: return a wrapper or"
                                + " Optional");
                    }
                    return Optional.of(annotation.value());
                })
                .orElse(null);
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        String name = election(method, target == null ? method.getDeclaringClass() : target.getClass());
        if (name == null) {
            return invocation.proceed();
        }
        LeaderElection candidate = elections.get(name);
        if (candidate == null) {
            candidate = candidate(name); // a bean created after the start
        }
        if (candidate != null && candidate.isLeader()) {
            return invocation.proceed();
        }
        return method.getReturnType() == Optional.class ? Optional.empty() : null;
    }

    /** The campaigning candidate of an election, joined now if need be; null unless running. */
    private synchronized LeaderElection candidate(String name) {
        if (!running) {
            return null;
        }
        return elections.computeIfAbsent(name, key -> {
            LeaderElection candidate = client.getObject().election(key);
            candidate.join();
            return candidate;
        });
    }

    @Override
    public synchronized void start() {
        running = true;
        names.values().forEach(name -> name.ifPresent(this::candidate));
    }

    @Override
    public synchronized void stop() {
        running = false;
        for (LeaderElection candidate : elections.values()) {
            try {
                candidate.close();
            } catch (RuntimeException e) {
                // the store did not confirm the resignation: the term ends when its lease runs out
            }
        }
        elections.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return this;
    }

    /** Annotated methods of any class; checks the annotation while matching. */
    private final class AnnotatedMethods extends StaticMethodMatcherPointcut {
        @Override
        public ClassFilter getClassFilter() {
            return type -> AnnotationUtils.isCandidateClass(type, OnLeader.class);
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return election(method, targetClass) != null;
        }
    }
}
