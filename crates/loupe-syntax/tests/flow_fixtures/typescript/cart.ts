import { formatPrice } from "./format";
import * as api from "./api";

export interface Line {
  sku: string;
  quantity: number;
  price: number;
}

export class Cart {
  private lines: Line[] = [];
  private currency: string;

  constructor(private readonly owner: string, currency?: string) {
    this.currency = currency ?? "EUR";
  }

  add(line: Line, quantity = 1): number {
    const existing = this.lines.find((l) => l.sku === line.sku);
    if (existing) {
      existing.quantity += quantity;
    } else {
      this.lines.push({ ...line, quantity });
    }
    quantity++;
    return quantity;
  }

  async checkout({ coupon, express }: Options, ...extras: string[]): Promise<string> {
    let total = this.lines.reduce((sum, line) => sum + line.price * line.quantity, 0);
    total = applyCoupon(total, coupon);
    for (const extra of extras) {
      total += await api.surcharge(extra, total);
    }
    const receipt = formatPrice(total!, this.owner);
    return express ? receipt : api.queue(receipt as string);
  }
}

export const totalOf = (lines: Line[]): number => {
  let total = 0;
  lines.forEach((line) => {
    total += line.price;
  });
  return total;
};
