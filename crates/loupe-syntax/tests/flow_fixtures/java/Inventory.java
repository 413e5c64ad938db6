package shop;

import java.util.List;
import java.util.Map;

public class Inventory {
    private final Map<String, Integer> stock;
    private int total;

    public Inventory(Map<String, Integer> stock) {
        this.stock = stock;
        this.total = count(stock);
    }

    public int reserve(String sku, int quantity) throws OutOfStock {
        int available = stock.getOrDefault(sku, 0);
        if (available < quantity) {
            throw new OutOfStock(sku, available);
        }
        available -= quantity;
        stock.put(sku, available);
        return available;
    }

    static int count(Map<String, Integer> stock) {
        int sum = 0;
        for (int value : stock.values()) {
            sum += value;
        }
        stock.forEach((key, value) -> System.out.println(key + value));
        return sum;
    }

    public List<String> lowStock(int threshold) {
        return stock.entrySet().stream()
            .filter(entry -> entry.getValue() < threshold)
            .map(entry -> String.format("%s=%d", entry.getKey(), entry.getValue()))
            .toList();
    }

    void load(String path) {
        try (var reader = Files.newBufferedReader(Path.of(path))) {
            String line;
            while ((line = reader.readLine()) != null) {
                parse(line);
            }
        } catch (IOException error) {
            log(error);
        }
        Object parsed = path;
        if (parsed instanceof String text && !text.isEmpty()) {
            log(text);
        }
    }
}
