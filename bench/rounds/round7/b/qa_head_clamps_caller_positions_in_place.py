# label: hazard silent
# why: the question-answering head clamps start_positions/end_positions with clamp_, rewriting the label tensors the caller still uses afterwards to score exact matches.
# source: https://github.com/huggingface/transformers/pull/47742
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss

torch.manual_seed(0)


class QuestionAnsweringModelOutput(dict):
    def __getattr__(self, name):
        return self[name]


class CanineForQuestionAnswering(nn.Module):
    def __init__(self, vocab_size=30, hidden_size=8, num_labels=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden_size)
        self.encoder = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.qa_outputs = nn.Linear(hidden_size, num_labels)

    def forward(self, input_ids, start_positions=None, end_positions=None):
        sequence_output, _ = self.encoder(self.embeddings(input_ids))
        logits = self.qa_outputs(sequence_output)
        start_logits, end_logits = logits.split(1, dim=-1)
        start_logits = start_logits.squeeze(-1)
        end_logits = end_logits.squeeze(-1)

        total_loss = None
        if start_positions is not None and end_positions is not None:
            # If we are on multi-GPU, split add a dimension
            if len(start_positions.size()) > 1:
                start_positions = start_positions.squeeze(-1)
            if len(end_positions.size()) > 1:
                end_positions = end_positions.squeeze(-1)
            # sometimes the start/end positions are outside our model inputs, we ignore these terms
            ignored_index = start_logits.size(1)
            start_positions.clamp_(0, ignored_index)  # <-- IPL004: rewrites the caller's label tensor
            end_positions.clamp_(0, ignored_index)  # <-- IPL004: rewrites the caller's label tensor

            loss_fct = CrossEntropyLoss(ignore_index=ignored_index)
            start_loss = loss_fct(start_logits, start_positions)
            end_loss = loss_fct(end_logits, end_positions)
            total_loss = (start_loss + end_loss) / 2
        return QuestionAnsweringModelOutput(loss=total_loss, start_logits=start_logits, end_logits=end_logits)


model = CanineForQuestionAnswering()
input_ids = torch.randint(0, 30, (4, 6))
start_positions = torch.tensor([1, 9999, 2, 0])
end_positions = torch.tensor([3, 9999, 4, 7])
outputs = model(input_ids, start_positions=start_positions, end_positions=end_positions)
outputs.loss.backward()
pred_start = outputs.start_logits.argmax(-1)
pred_end = outputs.end_logits.argmax(-1)
exact_match = ((pred_start == start_positions) & (pred_end == end_positions)).float().mean()
label_sum = start_positions.float().sum() + end_positions.float().sum()
