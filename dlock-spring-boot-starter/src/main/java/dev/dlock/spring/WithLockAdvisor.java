package dev.dlock.spring;

import dev.dlock.LockClient;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.aop.Advice;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Applies {@link WithLock}: the pointcut matches annotated methods and checks each annotation once,
 * when the bean is proxied; the advice is a {@link WithLockInterceptor}.
 *
 * <p>Why an advisor with a plain {@code MethodInterceptor} rather than an {@code @Aspect}: it needs only
 * spring-aop (no AspectJ weaver on the class path), it is applied by whichever auto-proxy creator the
 * application has (the infrastructure one Spring Boot registers without AspectJ, or the AspectJ-aware one
 * of {@code spring-boot-starter-aspectj}), as {@code @Transactional} and {@code @Cacheable} are, and its
 * pointcut can reject a bad annotation while the bean is created instead of at the first call.
 *
 * <p>Concurrency: plans are cached in a concurrent map keyed by method and target class.
 *
 * <p>Failure modes: an invalid annotation throws {@link IllegalStateException} from the pointcut, which
 * fails the creation of the bean and so the application's start.
 */
final class WithLockAdvisor extends AbstractPointcutAdvisor implements DisposableBean {
    private static final long serialVersionUID = 1L;

    private final transient ConcurrentHashMap<MethodClassKey, Optional<LockPlan>> plans = new ConcurrentHashMap<>();
    private final transient BeanFactory beanFactory;
    private final transient WithLockInterceptor interceptor;
    private final transient Pointcut pointcut = new AnnotatedMethods();

    WithLockAdvisor(
            ObjectProvider<LockClient> client,
            ObjectProvider<DlockProperties> properties,
            BeanFactory beanFactory,
            int order) {
        this.beanFactory = beanFactory;
        this.interceptor = new WithLockInterceptor(this::plan, client, properties);
        setOrder(order);
    }

    /** The plan of a method called on a target class, or null when the method is not annotated. */
    LockPlan plan(Method method, Class<?> targetClass) {
        return plans.computeIfAbsent(new MethodClassKey(method, targetClass), key -> {
                    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
                    WithLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, WithLock.class);
                    if (annotation == null && specific != method) {
                        annotation = AnnotatedElementUtils.findMergedAnnotation(method, WithLock.class);
                    }
                    return annotation == null
                            ? Optional.empty()
                            : Optional.of(LockPlan.of(annotation, specific, targetClass, beanFactory));
                })
                .orElse(null);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }

    @Override
    public void destroy() {
        interceptor.shutdown();
    }

    /** Annotated methods of any class; checks the annotation while matching. */
    private final class AnnotatedMethods extends StaticMethodMatcherPointcut {
        @Override
        public ClassFilter getClassFilter() {
            return type -> AnnotationUtils.isCandidateClass(type, WithLock.class);
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return plan(method, targetClass) != null;
        }
    }
}
