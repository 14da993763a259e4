# label: safe no-twin
# why: the collator masks the token ids in place but stores the helper's result back into the same dict slot, so nobody reads the old ids
import torch

torch.manual_seed(0)


class Collator:
    def __init__(self, mlm: bool, pad_id: int | None) -> None:
        self.mlm = mlm
        self.pad_id = pad_id

    def __call__(self, examples: list[list[int]]) -> dict:
        if len(examples) > 1:
            batch = {"input_ids": torch.tensor(examples)}
        else:
            batch = {"input_ids": torch.tensor(examples), "special_tokens_mask": None}
        special = batch.pop("special_tokens_mask", None)
        if self.mlm:
            batch["input_ids"], batch["labels"] = self.mask_tokens(batch["input_ids"], special)
        else:
            labels = batch["input_ids"].clone()
            if self.pad_id is not None:
                labels[labels == self.pad_id] = -100
            batch["labels"] = labels
        return batch

    def mask_tokens(self, inputs: torch.Tensor, special: torch.Tensor | None):
        labels = inputs.clone()
        masked = torch.bernoulli(torch.full(labels.shape, 0.3)).bool()
        labels[~masked] = -100
        inputs[masked] = 0
        return inputs, labels


for mlm in (True, False):
    out = Collator(mlm, pad_id=0)([[5, 6, 0], [7, 8, 9]])
    assert out["labels"].shape == (2, 3)
