import React, { useState } from "react";

type Props = { initial: number; onChange?: (value: number) => void };

export function Counter({ initial, onChange }: Props) {
  const [count, setCount] = useState(initial);
  const increment = () => {
    const next = count + 1;
    setCount(next);
    onChange?.(next);
  };
  return (
    <div className="counter">
      <Display value={count} label={`Count: ${count}`} />
      <button onClick={increment}>+</button>
    </div>
  );
}

function Display({ value, label }: { value: number; label: string }) {
  return <span title={label}>{value}</span>;
}
