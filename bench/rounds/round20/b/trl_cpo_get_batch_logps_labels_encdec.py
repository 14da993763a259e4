# label: hazard raises
# why: for encoder-decoder models get_batch_logps writes `labels[labels == label_pad_token_id] = 0` into the very concatenated_labels tensor that the NLL cross-entropy already saved as its target, so the backward of the CPO loss fails.
# source: https://github.com/huggingface/trl/commit/4d2c29291a8a8471b1846343130f0c3c9080ea26
from types import SimpleNamespace
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyEncoderDecoder(nn.Module):
    def __init__(self, vocab_size=11, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids, attention_mask=None, decoder_input_ids=None):
        _, h = self.encoder(self.embed(input_ids))
        out, _ = self.decoder(self.embed(decoder_input_ids), h)
        return SimpleNamespace(logits=self.lm_head(out))


class CPOTrainer:
    def __init__(self, model, beta=0.1, label_pad_token_id=-100, decoder_start_token_id=0):
        self.model = model
        self.beta = beta
        self.is_encoder_decoder = True
        self.label_pad_token_id = label_pad_token_id
        self.decoder_start_token_id = decoder_start_token_id
        self.loss_type = "sigmoid"

    def _shift_right(self, input_ids):
        shifted = input_ids.new_zeros(input_ids.shape)
        shifted[..., 1:] = input_ids[..., :-1].clone()
        shifted[..., 0] = self.decoder_start_token_id
        shifted.masked_fill_(shifted == self.label_pad_token_id, 0)
        return shifted

    @staticmethod
    def concatenated_inputs(batch: Dict[str, torch.LongTensor]) -> Dict[str, torch.LongTensor]:
        return {
            "concatenated_input_ids": torch.cat([batch["prompt_input_ids"], batch["prompt_input_ids"]]),
            "concatenated_attention_mask": torch.ones(2 * batch["prompt_input_ids"].shape[0], batch["prompt_input_ids"].shape[1]),
            "concatenated_labels": torch.cat([batch["chosen_labels"], batch["rejected_labels"]]),
        }

    @staticmethod
    def get_batch_logps(logits, labels, average_log_prob=False, label_pad_token_id=-100, is_encoder_decoder=False):
        if logits.shape[:-1] != labels.shape:
            raise ValueError("Logits (batch and sequence length dim) and labels must have the same shape.")

        if not is_encoder_decoder:
            labels = labels[:, 1:].clone()
            logits = logits[:, :-1, :]
        loss_mask = labels != label_pad_token_id

        # dummy token; we'll ignore the losses on these tokens later
        labels[labels == label_pad_token_id] = 0  # <-- IPL001, IPL004

        per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)

        if average_log_prob:
            return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
        else:
            return (per_token_logps * loss_mask).sum(-1)

    def concatenated_forward(self, model, batch):
        concatenated_batch = self.concatenated_inputs(batch)
        len_chosen = batch["chosen_labels"].shape[0]

        model_kwargs = {"decoder_input_ids": self._shift_right(concatenated_batch["concatenated_labels"])}
        outputs = model(
            concatenated_batch["concatenated_input_ids"],
            attention_mask=concatenated_batch["concatenated_attention_mask"],
            **model_kwargs,
        )
        all_logits = outputs.logits

        def cross_entropy_loss(logits, labels):
            if not self.is_encoder_decoder:
                logits = logits[..., :-1, :].contiguous()
                labels = labels[..., 1:].contiguous()
            loss_fct = nn.CrossEntropyLoss()
            logits = logits.view(-1, logits.shape[-1])
            labels = labels.view(-1)
            labels = labels.to(logits.device)
            return loss_fct(logits, labels)

        labels = concatenated_batch["concatenated_labels"]
        nll_loss = cross_entropy_loss(all_logits[:len_chosen], labels[:len_chosen])

        all_logps = self.get_batch_logps(
            all_logits,
            concatenated_batch["concatenated_labels"],
            average_log_prob=self.loss_type == "ipo",
            is_encoder_decoder=self.is_encoder_decoder,
            label_pad_token_id=self.label_pad_token_id,
        )
        return all_logps[:len_chosen], all_logps[len_chosen:], nll_loss

    def get_batch_loss_metrics(self, model, batch):
        chosen_logps, rejected_logps, nll_loss = self.concatenated_forward(model, batch)
        logits = chosen_logps - rejected_logps
        losses = -F.logsigmoid(self.beta * logits)
        return losses.mean() + nll_loss


def main():
    model = TinyEncoderDecoder()
    trainer = CPOTrainer(model)
    batch = {
        "prompt_input_ids": torch.randint(1, 11, (2, 5)),
        "chosen_labels": torch.tensor([[3, 4, 5, -100], [6, 7, -100, -100]]),
        "rejected_labels": torch.tensor([[8, 9, 2, 1], [5, -100, -100, -100]]),
    }
    loss = trainer.get_batch_loss_metrics(model, batch)
    loss.backward()
    return loss.detach(), model.lm_head.weight.grad


loss, lm_head_grad = main()
