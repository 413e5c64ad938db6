use std::collections::HashMap;

pub struct Ledger {
    balances: HashMap<String, i64>,
    amount: i64,
}

impl Ledger {
    pub fn deposit(&mut self, account: &str, amount: i64) -> i64 {
        let entry = self.balances.entry(account.to_owned()).or_insert(0);
        *entry += amount;
        self.amount += amount;
        log::info!("deposit {}", amount);
        audit(account, amount);
        *entry
    }

    pub fn transfer(&mut self, from: &str, to: &str, amount: i64) -> Result<i64, String> {
        let mut remaining = amount;
        if remaining <= 0 {
            return Err(format!("bad amount {remaining}"));
        }
        let fee = Ledger::fee(remaining);
        remaining -= fee;
        remaining = remaining.max(0);
        self.withdraw(from, &remaining)?;
        self.deposit(to, remaining);
        let report = |remaining: i64| remaining * 2;
        let doubled = report(fee);
        let scaled = |factor: i64| remaining * factor;
        Ok(scaled(doubled))
    }

    fn fee(amount: i64) -> i64 {
        if amount > 1000 { amount / 100 } else { amount }
    }

    fn withdraw(&mut self, account: &str, amount: &i64) -> Result<(), String> {
        match self.balances.get_mut(account) {
            Some(balance) if *balance >= *amount => {
                *balance -= *amount;
                Ok(())
            }
            Some(balance) => Err(format!("{account} has only {balance}")),
            None => Err(String::from(account)),
        }
    }
}

fn audit(account: &str, amount: i64) {
    for (index, part) in account.split('/').enumerate() {
        let Some(first) = part.chars().next() else { continue };
        record(index, first, amount);
    }
}

fn record(index: usize, first: char, amount: i64) -> (usize, char, i64) {
    let Point { x, y: (left, right) } = locate(index);
    (x, first, amount + left + right)
}
