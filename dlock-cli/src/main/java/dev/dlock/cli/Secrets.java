package dev.dlock.cli;

import java.util.regex.Pattern;

/**
 * Hides passwords in store URIs before the CLI prints or serves them: the password of the user info
 * ({@code redis://:pw@host}, {@code zookeeper://user:pw@host}) and {@code password=}-like query
 * parameters ({@code jdbc:postgresql://db/app?password=pw}).
 *
 * <p>Concurrency: stateless.
 */
final class Secrets {
    private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/@:?#]*:)[^@/?#]*@");
    private static final Pattern QUERY_PASSWORD =
            Pattern.compile("([?&;](?:password|pass|pwd|secret)=)[^&;#]*", Pattern.CASE_INSENSITIVE);

    private Secrets() {}

    /** The URI with every password replaced by {@code ****}. */
    static String mask(String uri) {
        String masked = USER_INFO_PASSWORD.matcher(uri).replaceAll("$1****@");
        return QUERY_PASSWORD.matcher(masked).replaceAll("$1****");
    }
}
