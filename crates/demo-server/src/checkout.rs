//! The in-memory checkout: stock, reservations, charges and shipments, and the tool calls on them.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// Why a tool call was refused: becomes a `CallToolResult` with `isError: true`.
type Refusal = String;

#[derive(Debug, Clone, PartialEq)]
struct Reservation {
    sku: String,
    quantity: i64,
}

#[derive(Debug, Clone, PartialEq)]
struct Charge {
    customer_id: String,
    amount: f64,
    currency: String,
}

#[derive(Debug, Clone, PartialEq)]
struct Shipment {
    reservation_id: String,
    address: String,
}

/// The whole state of the shop. Undone records move to the `released`/`refunded`/`cancelled`
/// archives so that a repeated compensation answers the same way (idempotence) while the
/// visible state returns exactly to what it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkout {
    inventory: BTreeMap<String, i64>,
    reservations: BTreeMap<String, Reservation>,
    charges: BTreeMap<String, Charge>,
    shipments: BTreeMap<String, Shipment>,
    released: BTreeMap<String, Reservation>,
    refunded: BTreeMap<String, Charge>,
    cancelled: BTreeMap<String, Shipment>,
    next_id: u64,
}

impl Default for Checkout {
    fn default() -> Checkout {
        Checkout::new()
    }
}

impl Checkout {
    /// A shop with 10 `sku-widget` and 3 `sku-gadget` in stock and nothing else.
    pub fn new() -> Checkout {
        Checkout {
            inventory: BTreeMap::from([("sku-gadget".into(), 3), ("sku-widget".into(), 10)]),
            reservations: BTreeMap::new(),
            charges: BTreeMap::new(),
            shipments: BTreeMap::new(),
            released: BTreeMap::new(),
            refunded: BTreeMap::new(),
            cancelled: BTreeMap::new(),
            next_id: 0,
        }
    }

    /// Runs a tool and returns its `CallToolResult`, or `None` when no tool has that name.
    pub fn call(&mut self, name: &str, arguments: &Map<String, Value>) -> Option<Value> {
        let outcome = match name {
            "reserve_inventory" => self.reserve_inventory(arguments),
            "release_inventory" => self.release_inventory(arguments),
            "charge_payment" => self.charge_payment(arguments),
            "refund_payment" => self.refund_payment(arguments),
            "create_shipment" => self.create_shipment(arguments),
            "cancel_shipment" => self.cancel_shipment(arguments),
            "get_state" => Args::new(arguments, &[]).map(|_| self.state()),
            _ => return None,
        };
        Some(match outcome {
            Ok(structured) => json!({
                "content": [{"type": "text", "text": structured.to_string()}],
                "structuredContent": structured,
            }),
            Err(refusal) => json!({
                "content": [{"type": "text", "text": refusal}],
                "isError": true,
            }),
        })
    }

    /// The visible state, as `get_state` returns it.
    pub fn state(&self) -> Value {
        let reservations: Map<String, Value> = self
            .reservations
            .iter()
            .map(|(id, r)| (id.clone(), json!({"sku": r.sku, "quantity": r.quantity})))
            .collect();
        let charges: Map<String, Value> = self
            .charges
            .iter()
            .map(|(id, c)| {
                let charge =
                    json!({"customerId": c.customer_id, "amount": c.amount, "currency": c.currency});
                (id.clone(), charge)
            })
            .collect();
        let shipments: Map<String, Value> = self
            .shipments
            .iter()
            .map(|(id, s)| {
                (
                    id.clone(),
                    json!({"reservationId": s.reservation_id, "address": s.address}),
                )
            })
            .collect();
        json!({
            "inventory": self.inventory,
            "reservations": reservations,
            "charges": charges,
            "shipments": shipments,
        })
    }

    fn new_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}-{}", self.next_id)
    }

    fn reserve_inventory(&mut self, arguments: &Map<String, Value>) -> Result<Value, Refusal> {
        let args = Args::new(arguments, &["sku", "quantity"])?;
        let sku = args.string("sku")?;
        let quantity = args.integer("quantity")?;
        if quantity < 1 {
            return Err("quantity must be at least 1".into());
        }
        let Some(available) = self.inventory.get_mut(&sku) else {
            return Err(format!("unknown sku {sku:?}"));
        };
        if *available < quantity {
            return Err(format!("only {available} units of {sku} are in stock"));
        }
        *available -= quantity;
        let id = self.new_id("res");
        self.reservations.insert(
            id.clone(),
            Reservation {
                sku: sku.clone(),
                quantity,
            },
        );
        Ok(json!({"reservationId": id, "sku": sku, "quantity": quantity}))
    }

    fn release_inventory(&mut self, arguments: &Map<String, Value>) -> Result<Value, Refusal> {
        let args = Args::new(arguments, &["reservationId"])?;
        let id = args.string("reservationId")?;
        let reservation = if let Some(done) = self.released.get(&id) {
            done.clone()
        } else if let Some(reservation) = self.reservations.remove(&id) {
            *self.inventory.entry(reservation.sku.clone()).or_insert(0) += reservation.quantity;
            self.released.insert(id.clone(), reservation.clone());
            reservation
        } else {
            return Err(format!("no reservation {id:?}"));
        };
        Ok(json!({
            "reservationId": id,
            "sku": reservation.sku,
            "quantity": reservation.quantity,
            "status": "released",
        }))
    }

    fn charge_payment(&mut self, arguments: &Map<String, Value>) -> Result<Value, Refusal> {
        let args = Args::new(arguments, &["customerId", "amount", "currency"])?;
        let customer_id = args.string("customerId")?;
        let amount = args.number("amount")?;
        let currency = args.string("currency")?;
        if amount.is_nan() || amount <= 0.0 {
            return Err("amount must be greater than 0".into());
        }
        if currency.len() != 3 || !currency.chars().all(|c| c.is_ascii_uppercase()) {
            return Err(format!(
                "currency {currency:?} is not a three-letter ISO 4217 code"
            ));
        }
        let id = self.new_id("txn");
        self.charges.insert(
            id.clone(),
            Charge {
                customer_id,
                amount,
                currency: currency.clone(),
            },
        );
        Ok(json!({"transactionId": id, "amount": amount, "currency": currency}))
    }

    fn refund_payment(&mut self, arguments: &Map<String, Value>) -> Result<Value, Refusal> {
        let args = Args::new(arguments, &["transactionId", "amount"])?;
        let id = args.string("transactionId")?;
        let requested = args.optional_number("amount")?;
        let known = self.refunded.get(&id).or_else(|| self.charges.get(&id));
        let Some(charge) = known.cloned() else {
            return Err(format!("no charge {id:?}"));
        };
        if let Some(requested) = requested {
            // Exact equality on purpose: the compensation passes the captured amount back.
            if requested != charge.amount {
                return Err(format!(
                    "amount {requested} differs from the captured {}; partial refunds are not supported",
                    charge.amount
                ));
            }
        }
        if let Some(charge) = self.charges.remove(&id) {
            self.refunded.insert(id.clone(), charge);
        }
        Ok(json!({
            "transactionId": id,
            "amount": charge.amount,
            "currency": charge.currency,
            "status": "refunded",
        }))
    }

    fn create_shipment(&mut self, arguments: &Map<String, Value>) -> Result<Value, Refusal> {
        let args = Args::new(arguments, &["reservationId", "address", "simulateFailure"])?;
        let reservation_id = args.string("reservationId")?;
        let address = args.string("address")?;
        if args.optional_bool("simulateFailure")? == Some(true) {
            return Err("the carrier rejected the shipment (simulated failure)".into());
        }
        if !self.reservations.contains_key(&reservation_id) {
            return Err(format!("no open reservation {reservation_id:?}"));
        }
        let id = self.new_id("shp");
        let shipment = Shipment {
            reservation_id: reservation_id.clone(),
            address: address.clone(),
        };
        self.shipments.insert(id.clone(), shipment);
        Ok(json!({"shipmentId": id, "reservationId": reservation_id, "address": address}))
    }

    fn cancel_shipment(&mut self, arguments: &Map<String, Value>) -> Result<Value, Refusal> {
        let args = Args::new(arguments, &["shipmentId"])?;
        let id = args.string("shipmentId")?;
        if !self.cancelled.contains_key(&id) {
            let Some(shipment) = self.shipments.remove(&id) else {
                return Err(format!("no shipment {id:?}"));
            };
            self.cancelled.insert(id.clone(), shipment);
        }
        Ok(json!({"shipmentId": id, "status": "cancelled"}))
    }
}

/// Checked access to a call's arguments, mirroring each tool's `inputSchema`.
struct Args<'a> {
    arguments: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// Refuses arguments the schema does not allow (`additionalProperties: false`).
    fn new(arguments: &'a Map<String, Value>, allowed: &[&str]) -> Result<Args<'a>, Refusal> {
        if let Some(unknown) = arguments.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!("unknown argument {unknown:?}"));
        }
        Ok(Args { arguments })
    }

    fn required(&self, name: &str) -> Result<&'a Value, Refusal> {
        self.arguments
            .get(name)
            .ok_or_else(|| format!("missing argument {name:?}"))
    }

    fn string(&self, name: &str) -> Result<String, Refusal> {
        match self.required(name)? {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            _ => Err(format!("argument {name:?} must be a non-empty string")),
        }
    }

    fn integer(&self, name: &str) -> Result<i64, Refusal> {
        self.required(name)?
            .as_i64()
            .ok_or_else(|| format!("argument {name:?} must be an integer"))
    }

    fn number(&self, name: &str) -> Result<f64, Refusal> {
        self.required(name)?
            .as_f64()
            .ok_or_else(|| format!("argument {name:?} must be a number"))
    }

    fn optional_number(&self, name: &str) -> Result<Option<f64>, Refusal> {
        match self.arguments.get(name) {
            None => Ok(None),
            Some(_) => self.number(name).map(Some),
        }
    }

    fn optional_bool(&self, name: &str) -> Result<Option<bool>, Refusal> {
        match self.arguments.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(format!("argument {name:?} must be a boolean")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(shop: &mut Checkout, name: &str, arguments: Value) -> Value {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object")
        };
        shop.call(name, &arguments).unwrap()
    }

    #[test]
    fn compensations_restore_the_start_and_repeat_harmlessly() {
        let mut shop = Checkout::new();
        let start = shop.state();
        let reserved = call(
            &mut shop,
            "reserve_inventory",
            json!({"sku": "sku-widget", "quantity": 2}),
        );
        let reservation = reserved["structuredContent"]["reservationId"].clone();
        let charged = call(
            &mut shop,
            "charge_payment",
            json!({"customerId": "c-1", "amount": 59.97, "currency": "EUR"}),
        );
        let transaction = charged["structuredContent"]["transactionId"].clone();
        let failed = call(
            &mut shop,
            "create_shipment",
            json!({"reservationId": reservation, "address": "1 Main St", "simulateFailure": true}),
        );
        assert_eq!(failed["isError"], true);
        assert_ne!(shop.state(), start);
        let refund = json!({"transactionId": transaction, "amount": 59.97});
        let first = call(&mut shop, "refund_payment", refund.clone());
        assert_eq!(call(&mut shop, "refund_payment", refund), first);
        let release = json!({"reservationId": reservation});
        let first = call(&mut shop, "release_inventory", release.clone());
        assert_eq!(call(&mut shop, "release_inventory", release), first);
        assert_eq!(shop.state(), start);
    }

    #[test]
    fn bad_arguments_are_tool_errors() {
        let mut shop = Checkout::new();
        for (name, arguments) in [
            ("reserve_inventory", json!({"sku": "sku-widget"})),
            (
                "reserve_inventory",
                json!({"sku": "sku-widget", "quantity": 11}),
            ),
            ("reserve_inventory", json!({"sku": "nope", "quantity": 1})),
            (
                "reserve_inventory",
                json!({"sku": "sku-widget", "quantity": 1, "x": 1}),
            ),
            (
                "charge_payment",
                json!({"customerId": "c", "amount": 1, "currency": "eur"}),
            ),
            ("refund_payment", json!({"transactionId": "txn-404"})),
            ("release_inventory", json!({"reservationId": 7})),
            (
                "create_shipment",
                json!({"reservationId": "res-404", "address": "x"}),
            ),
            ("cancel_shipment", json!({"shipmentId": "shp-404"})),
        ] {
            assert_eq!(
                call(&mut shop, name, arguments.clone())["isError"],
                true,
                "{name} {arguments}"
            );
        }
        assert_eq!(shop.state(), Checkout::new().state());
        assert!(shop.call("no_such_tool", &Map::new()).is_none());
    }
}
