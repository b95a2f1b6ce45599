package dev.dlock.example;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** {@code POST /orders/{id}/ship} (locked per order) and {@code GET /catalog} (reactive, shared lock). */
@RestController
public class ShopController {
    private final Shop shop;

    /**
     * Created by Spring.
     *
     * @param shop the locked work
     */
    public ShopController(Shop shop) {
        this.shop = shop;
    }

    /**
     * Ships an order.
     *
     * @param id the order
     * @return what was done
     */
    @PostMapping("/orders/{id}/ship")
    public String ship(@PathVariable long id) {
        return shop.ship(id, null);
    }

    /**
     * The catalog.
     *
     * @return the catalog, once the shared lock is held
     */
    @GetMapping("/catalog")
    public Mono<String> catalog() {
        return shop.catalog();
    }

    /**
     * 409 for an order that is being shipped.
     *
     * @param busy the refusal
     * @return the answer
     */
    @ExceptionHandler(Shop.OrderBusyException.class)
    public ResponseEntity<String> busy(Shop.OrderBusyException busy) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(busy.getMessage());
    }
}
